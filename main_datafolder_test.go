package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/cli"
	"rootkeeper/mcp/confine"
)

// needLandlock skips where Landlock is not Linux's, and fails where it
// should be and is not.
func needLandlock(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("Landlock is Linux's")
	}
	if _, err := confine.ABI(); err != nil {
		t.Fatalf("Landlock: %v", err)
	}
}

// tryOK reports whether a nosy try answer (a tool result holding nosy's
// JSON) says the operation worked.
func tryOK(line string) bool { return strings.Contains(line, `\"ok\":true`) }

// keptOf is server's kept-aside data folders in `status --json`.
func keptOf(t *testing.T, state, server string) []cli.KeptDataView {
	t.Helper()
	for _, s := range liveStatus(t, state).Servers {
		if s.Name == server {
			return s.KeptData
		}
	}
	t.Fatalf("no server %q in status", server)
	return nil
}

// TestDataFolderFollowsTheProgram, through the real binary and a host's
// bridge: a confined server writes into its data folder; redefined to run
// another program under the same name, it finds that folder empty, the
// old one kept aside and named in `status --json`; `servers data nosy use`
// gives it back (what the new program wrote is kept aside in turn), and
// `remove` deletes that; redefined as the same program with another folder
// argument, it keeps its data.
func TestDataFolderFollowsTheProgram(t *testing.T) {
	needLandlock(t)
	nosy := apptest.Program(t, "mcp/confine/testdata/nosy")
	other := filepath.Join(t.TempDir(), "nosy-fork") // another program: another command
	if b, err := os.ReadFile(nosy); err != nil || os.WriteFile(other, b, 0o755) != nil {
		t.Fatalf("copying nosy: %v", err)
	}
	state, _ := filepath.EvalSymlinks(t.TempDir())
	data := filepath.Join(state, "data", "nosy")
	note, mine := filepath.Join(data, "note"), filepath.Join(data, "mine")
	mustRun(t, state, "servers", "add", "nosy", "--confine", "--", nosy)

	h := startHostSession(t, state)
	if line := <-h.try("write", note); !tryOK(line) {
		t.Fatalf("the confined server could not write its data folder: %s", line)
	}

	out := mustRun(t, state, "servers", "add", "nosy", "--replace", "--", other)
	if !strings.Contains(out, "nosy now runs another program: it starts with an empty data folder, and the data of command "+nosy+" is kept aside in ") {
		t.Errorf("servers add --replace said %q", out)
	}
	kept := keptOf(t, state, "nosy")
	if len(kept) != 1 || kept[0].Program != "command "+nosy {
		t.Fatalf("status --json kept %+v", kept)
	}
	if _, err := os.Stat(filepath.Join(kept[0].Path, "note")); err != nil {
		t.Errorf("the note is not in the kept folder: %v", err)
	}
	h = startHostSession(t, state)
	if line := <-h.try("read", note); tryOK(line) {
		t.Errorf("the new program read the old one's note: %s", line)
	}
	if line := <-h.try("write", mine); !tryOK(line) {
		t.Fatalf("the new program could not write its data folder: %s", line)
	}

	if out := mustRun(t, state, "servers", "data", "nosy", "use"); !strings.Contains(out, "nosy has the kept data now") {
		t.Errorf("servers data use said %q", out)
	}
	h = startHostSession(t, state)
	if line := <-h.try("read", note); !tryOK(line) {
		t.Errorf("after use, the new program cannot read the note: %s", line)
	}
	kept = keptOf(t, state, "nosy")
	if len(kept) != 1 || kept[0].Program != "command "+other {
		t.Fatalf("after use, kept %+v: want what the new program wrote", kept)
	}
	if _, err := os.Stat(filepath.Join(kept[0].Path, "mine")); err != nil {
		t.Errorf("what the new program wrote is not kept: %v", err)
	}
	mustRun(t, state, "servers", "data", "nosy", "remove")
	if _, err := os.Stat(kept[0].Path); !os.IsNotExist(err) {
		t.Errorf("remove left %s: %v", kept[0].Path, err)
	}
	if kept := keptOf(t, state, "nosy"); len(kept) != 0 {
		t.Errorf("after remove, kept %+v", kept)
	}

	// The same program with another folder argument keeps its data.
	out = mustRun(t, state, "servers", "add", "nosy", "--replace", "--", other, "-probe", filepath.Join(state, "no-such-folder"))
	if strings.Contains(out, "kept aside") || len(keptOf(t, state, "nosy")) != 0 {
		t.Errorf("a changed argument kept the data aside: %s", out)
	}
	h = startHostSession(t, state)
	if line := <-h.try("read", note); !tryOK(line) {
		t.Errorf("after a changed argument, the note is gone: %s", line)
	}
}

// TestWhatAServerNeedsIsItsOwn, through the real binary with the app
// running headless: a confined server that reads ~/.kube/config at its
// start stops; its failure offers ~/.kube for it before running it
// unconfined; granted, ~/.kube is that server's alone — it starts and reads
// the file, `roots list` has no such root, its roots/list answer does not
// hold it, another server's status says nothing of it — and revoked, the
// server stops at its start again.
func TestWhatAServerNeedsIsItsOwn(t *testing.T) {
	needLandlock(t)
	needy := apptest.Program(t, "testdata/needy")
	home, _ := filepath.EvalSymlinks(t.TempDir())
	kube := filepath.Join(home, ".kube")
	project := filepath.Join(home, "project")
	os.Mkdir(kube, 0o700)
	os.Mkdir(project, 0o755)
	os.WriteFile(filepath.Join(kube, "config"), []byte("clusters: []\n"), 0o600)
	env := append(serverEnv(), "HOME="+home)
	state := t.TempDir()
	rk := func(args ...string) string { t.Helper(); return rkIn(t, env, state, args...) }
	rk("servers", "add", "k8s", "--", needy)
	rk("servers", "add", "other", "--", apptest.Program(t, "mcp/confine/testdata/nosy"))
	rk("roots", "add", project, "--enable")
	rk("grant", "k8s", project)
	rk("grant", "other", project)
	startHeadlessIn(t, env, state)

	var failure *app.ConfineFailure
	waitFor(t, "k8s's confined start to fail for ~/.kube", func() bool {
		for _, s := range liveStatus(t, state).Servers {
			if s.Name == "k8s" {
				failure = s.Failure
			}
		}
		return failure != nil && failure.Folder == kube
	})
	text := rk("status")
	offer := "k8s stopped while confined: it tried to read ~/.kube/config — allow ~/.kube for k8s, or run it unconfined\n" +
		"    allow ~/.kube for k8s (it alone): rootkeeper grant k8s " + kube + "\n" +
		"    run it unconfined: rootkeeper servers unconfine k8s\n"
	if !strings.Contains(text, offer) {
		t.Errorf("status does not offer ~/.kube first:\n%s", text)
	}

	if out := rk("grant", "k8s", kube); !strings.Contains(out, "k8s may now use "+kube+" to run") {
		t.Errorf("grant said %q", out)
	}
	var k8s, others cli.ServerView
	waitFor(t, "k8s to start with ~/.kube and ask for its roots", func() bool {
		for _, s := range liveStatus(t, state).Servers {
			switch s.Name {
			case "k8s":
				k8s = s
			case "other":
				others = s
			}
		}
		return k8s.Live != nil && k8s.Live.State == app.ServerConnected && len(k8s.Live.LastSent) > 0
	})
	if !slices.Equal(k8s.Live.LastSent, []string{app.URIFromPath(project)}) {
		t.Errorf("k8s's roots/list answer: %q, want only the project", k8s.Live.LastSent)
	}
	if len(k8s.Needs) != 1 || k8s.Needs[0].Path != kube || k8s.Failure != nil {
		t.Errorf("k8s in status: needs %+v, failure %+v", k8s.Needs, k8s.Failure)
	}
	if b, _ := json.Marshal(others); strings.Contains(string(b), ".kube") {
		t.Errorf("another server's status speaks of ~/.kube: %s", b)
	}
	if roots := rk("roots", "list", "--json"); strings.Contains(roots, ".kube") {
		t.Errorf("roots list: %s", roots)
	}
	if text := rk("status"); !strings.Contains(text, "  needs to run: ~/.kube (read-write, its alone") {
		t.Errorf("status:\n%s", text)
	}

	rk("revoke", "k8s", kube)
	waitFor(t, "k8s to stop at its start again once ~/.kube was taken away", func() bool {
		for _, s := range liveStatus(t, state).Servers {
			if s.Name == "k8s" {
				return len(s.Needs) == 0 && s.Failure != nil && s.Failure.Folder == kube
			}
		}
		return false
	})
}
