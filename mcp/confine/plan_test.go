package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// write makes a file (and its folders) with mode.
func write(t *testing.T, path, body string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// rulesOf plans cmd under p with home and returns path -> access.
func rulesOf(t *testing.T, cmd *exec.Cmd, p Policy, home string) map[string]string {
	t.Helper()
	s, err := plan(cmd, p, home)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, r := range s.Rules {
		m[r.Path] = r.Access
	}
	return m
}

// TestPlanGrantsWhatAServerRunsFrom: the install folders of a .bin
// launcher, of a #! runtime found on the server's PATH, of a script handed
// to a runtime (up to its package), and an npx cache; roots and temp
// read-write; a data file alone; never the home folder, / or /tmp.
func TestPlanGrantsWhatAServerRunsFrom(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	os.MkdirAll(filepath.Join(home, ".npm"), 0o755)

	// A runtime in its own prefix, found through the server's PATH.
	prefix := filepath.Join(base, "opt", "node-v1")
	fakeNode := write(t, filepath.Join(prefix, "bin", "fakenode"), "#!/bin/sh\n", 0o755)
	os.MkdirAll(filepath.Join(prefix, "lib"), 0o755)
	// A package with a .bin link to its script, which names the runtime.
	nm := filepath.Join(base, "app", "node_modules")
	write(t, filepath.Join(nm, "@x", "server", "dist", "index.js"), "#!/usr/bin/env fakenode\n", 0o755)
	link := filepath.Join(nm, ".bin", "server")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink("../@x/server/dist/index.js", link); err != nil {
		t.Fatal(err)
	}
	root, temp := filepath.Join(base, "root"), filepath.Join(base, "state", "tmp", "fs")

	cmd := exec.Command(link)
	cmd.Env = []string{"PATH=" + filepath.Join(prefix, "bin"), "HOME=" + home}
	got := rulesOf(t, cmd, Policy{Roots: []string{root}, Temp: temp}, home)
	for path, access := range map[string]string{
		nm: accessRead, filepath.Join(prefix, "bin"): accessRead, filepath.Join(prefix, "lib"): accessRead,
		root: accessWrite, temp: accessWrite, "/usr": accessRead, "/dev/null": accessWrite,
	} {
		if got[path] != access {
			t.Errorf("rule for %s = %q, want %q", path, got[path], access)
		}
	}
	for _, never := range []string{home, base, "/", "/tmp", filepath.Join(base, "app"), filepath.Join(home, ".npm")} {
		if a, ok := got[never]; ok {
			t.Errorf("%s granted (%s)", never, a)
		}
	}

	// A runtime on a script in a checkout (up to its package.json), a data
	// file (only itself), and npx's cache.
	checkout := filepath.Join(base, "src", "myserver")
	write(t, filepath.Join(checkout, "package.json"), "{}", 0o644)
	main := write(t, filepath.Join(checkout, "dist", "index.js"), "", 0o644)
	conf := write(t, filepath.Join(base, "etc-private", "conf.yaml"), "", 0o600)
	npx := write(t, filepath.Join(prefix, "bin", "npx"), "#!/bin/sh\n", 0o755)
	cmd = exec.Command(fakeNode, main, "--config", conf)
	cmd.Env = []string{"PATH=/usr/bin"}
	got = rulesOf(t, cmd, Policy{}, home)
	if got[checkout] != accessRead || got[conf] != accessRead {
		t.Errorf("checkout %q, config %q; want both read", got[checkout], got[conf])
	}
	if _, ok := got[filepath.Dir(conf)]; ok {
		t.Errorf("the config's folder was granted")
	}
	// npx gets a private package cache, never the shared one, and the
	// node_modules of the project it runs in.
	npxCmd := exec.Command(npx, "-y", "@x/server")
	npxCmd.Dir = filepath.Join(base, "app")
	temp = filepath.Join(base, "state", "tmp", "npx")
	sp, err := plan(npxCmd, Policy{Temp: temp}, home)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(sp.env, "npm_config_cache="+filepath.Join(temp, "cache")) {
		t.Errorf("npx env %q: want its cache in its temp folder", sp.env)
	}
	got = rulesOf(t, npxCmd, Policy{Temp: temp}, home)
	if got[nm] != accessRead {
		t.Errorf("npx without its project's node_modules: %v", got)
	}
	if _, ok := got[filepath.Join(home, ".npm")]; ok {
		t.Errorf("npx was granted the shared npm cache")
	}
}

// TestPlanNeverGrantsHome: a server installed right in the home folder gets
// its own file, not the home folder.
func TestPlanNeverGrantsHome(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exe := write(t, filepath.Join(home, "server"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(home, "package.json"), "{}", 0o644)
	got := rulesOf(t, exec.Command(exe), Policy{}, home)
	if got[exe] != accessRead {
		t.Errorf("the server itself: %q", got[exe])
	}
	for path := range got {
		if within(home, path) {
			t.Errorf("%s granted: it holds the home folder", path)
		}
	}
	if !slices.Contains(systemRead, procSelf) {
		t.Errorf("no /proc/self rule")
	}
}

// TestPlanKeepsOutOfTheStateFolder: a file in the state folder named on the
// command line is not granted; the private temp folder inside it is.
func TestPlanKeepsOutOfTheStateFolder(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(base, "state")
	stateFile := write(t, filepath.Join(state, "state.json"), "{}", 0o600)
	temp := filepath.Join(state, "tmp", "server-x")
	got := rulesOf(t, exec.Command("/bin/cat", stateFile), Policy{Temp: temp, Protect: []string{state}}, filepath.Join(base, "home"))
	if a, ok := got[stateFile]; ok {
		t.Errorf("the state file was granted (%s)", a)
	}
	if got[temp] != accessWrite {
		t.Errorf("the temp folder: %q", got[temp])
	}
}
