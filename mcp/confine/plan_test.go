package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"slices"
	"strings"
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
	base := apptest.RealTempDir(t)
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
	home := apptest.RealTempDir(t)
	exe := write(t, filepath.Join(home, "server"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(home, "package.json"), "{}", 0o644)
	got := rulesOf(t, exec.Command(exe), Policy{}, home)
	if got[exe] != accessRead {
		t.Errorf("the server itself: %q", got[exe])
	}
	for path := range got {
		if app.IsWithin(home, path) {
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
	base := apptest.RealTempDir(t)
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

// TestPrivateFoldersWhateverTheEnvironmentSays: the temp and cache
// variables point into the private temp folder and the XDG base folders
// into the data folder, replacing what the environment said (npm's in any
// case); an installed browser stays found where the cache moved away.
func TestPrivateFoldersWhateverTheEnvironmentSays(t *testing.T) {
	base := t.TempDir()
	home, temp, data := filepath.Join(base, "home"), filepath.Join(base, "tmp"), filepath.Join(base, "data")
	os.MkdirAll(filepath.Join(home, ".cache", "ms-playwright"), 0o755)
	env := []string{"HOME=" + home, "npm_config_cache=" + home + "/.npm", "NPM_CONFIG_CACHE=" + home + "/.npm2",
		"UV_CACHE_DIR=/shared/uv", "YARN_CACHE_FOLDER=/shared/yarn", "PIP_CACHE_DIR=/shared/pip", "DENO_DIR=/shared/deno",
		"BUN_INSTALL_CACHE_DIR=/shared/bun", "GOCACHE=/shared/go", "XDG_CONFIG_HOME=" + home + "/.config", "TMPDIR=/tmp", "KEEP=1",
		"GIT_CONFIG_GLOBAL=" + home + "/.gitconfig", "NPM_CONFIG_USERCONFIG=" + home + "/.npmrc"}
	got := privateFolders(env, temp, data, home)
	want := map[string]string{
		"npm_config_cache": filepath.Join(temp, "cache", "npm"), "UV_CACHE_DIR": filepath.Join(temp, "cache", "uv"),
		"YARN_CACHE_FOLDER": filepath.Join(temp, "cache", "yarn"), "PIP_CACHE_DIR": filepath.Join(temp, "cache", "pip"),
		"DENO_DIR": filepath.Join(temp, "cache", "deno"), "BUN_INSTALL_CACHE_DIR": filepath.Join(temp, "cache", "bun"),
		"GOCACHE": filepath.Join(temp, "cache", "go-build"), "XDG_CACHE_HOME": filepath.Join(temp, "cache"),
		"XDG_CONFIG_HOME": filepath.Join(data, "config"), "XDG_DATA_HOME": filepath.Join(data, "share"), "XDG_STATE_HOME": filepath.Join(data, "state"),
		"TMPDIR": temp, "TMP": temp, "TEMP": temp, "KEEP": "1",
		"PLAYWRIGHT_BROWSERS_PATH": filepath.Join(home, ".cache", "ms-playwright"),
		"GIT_CONFIG_GLOBAL":        filepath.Join(data, "gitconfig"), "npm_config_userconfig": filepath.Join(data, "npmrc"),
	}
	for k, v := range want {
		if envValue(got, k) != v {
			t.Errorf("%s = %q, want %q", k, envValue(got, k), v)
		}
	}
	for _, kv := range got {
		if strings.HasPrefix(kv, "NPM_CONFIG_CACHE=") {
			t.Errorf("npm's cache is still named in another case: %s", kv)
		}
		if strings.HasPrefix(kv, "PUPPETEER_CACHE_DIR=") {
			t.Errorf("a browser cache that does not exist was named: %s", kv)
		}
	}
	for _, d := range []string{filepath.Join(temp, "cache", "npm"), filepath.Join(data, "config")} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s was not made 0700: %v", d, err)
		}
	}
}

// TestPlanListsUpToTheManifest: the folders from a program's install folder
// up to the nearest manifest are listable, names only; a walk that would
// reach the home folder lists nothing; the data folder and the server's
// own paths are read-write, the data folder even inside a protected
// folder.
func TestPlanListsUpToTheManifest(t *testing.T) {
	base := apptest.RealTempDir(t)
	home := filepath.Join(base, "home")
	proj := filepath.Join(base, "work", "tools")
	write(t, filepath.Join(proj, "package.json"), "{}", 0o644)
	bin := write(t, filepath.Join(proj, "node_modules", "srv", "dist", "index.js"), "#!/bin/sh\n", 0o755)
	state := filepath.Join(base, "state")
	data := filepath.Join(state, "data", "srv")
	own := filepath.Join(home, ".srv-settings") + "/"
	os.MkdirAll(home, 0o755)
	cmd := exec.Command(bin)
	got := rulesOf(t, cmd, Policy{Data: data, Own: []string{own}, Protect: []string{state}}, home)
	if got[proj] != accessList {
		t.Errorf("the project above node_modules: %q, want list only (rules %v)", got[proj], got)
	}
	if _, ok := got[filepath.Join(base, "work")]; ok {
		t.Errorf("a folder above the manifest was granted: %v", got)
	}
	if got[data] != accessWrite || got[filepath.Clean(own)] != accessWrite {
		t.Errorf("data %q, own %q: want both read-write", got[data], got[filepath.Clean(own)])
	}
	if walk := manifestWalk([]string{filepath.Join(home, "a", "b", "node_modules")}, home); len(walk) != 0 {
		t.Errorf("a walk into the home folder gave %q", walk)
	}
}
