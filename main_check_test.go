package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"rootkeeper/app/apptest"
)

// roots check: with the app running, its health monitor checks the folder
// now and what the servers see follows at once (here the folder's
// grandparent is renamed away and back, which no watch sees); with no app,
// the same check runs in the command. A folder that does not pass exits 1;
// a disabled folder, or none, is bad input.
func TestRootsCheck(t *testing.T) {
	state := t.TempDir()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "work", "src", "proj")
	os.MkdirAll(root, 0o755)
	away := func(gone bool) {
		t.Helper()
		from, to := filepath.Join(base, "work"), filepath.Join(base, "work-away")
		if !gone {
			from, to = to, from
		}
		if err := os.Rename(from, to); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, state, "roots", "add", root, "--enable")
	mustRun(t, state, "servers", "add", "fs", "--", "sleep", "600")
	mustRun(t, state, "grant", "fs", "proj")
	checkFails := func(why string) {
		t.Helper()
		out, errOut, code := rootkeeper(t, state, "roots", "check", "proj")
		if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, root+" does not pass its access check ("+why) {
			t.Fatalf("roots check of a folder that went: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	}

	// No app: the command checks.
	if out := mustRun(t, state, "roots", "check", "proj"); out != root+": ok\n" {
		t.Errorf("roots check with no app: %q", out)
	}
	away(true)
	checkFails("missing: stat ")
	away(false)

	startHeadless(t, state)
	// What the running app says fs sees (the command works it out itself
	// until the app answers: not what is asked here).
	sees := func() []string {
		st := liveStatus(t, state)
		if !st.Running {
			return []string{"(the app is not answering yet)"}
		}
		for _, s := range st.Servers {
			if s.Name == "fs" {
				var paths []string
				for _, r := range s.Visible {
					paths = append(paths, r.Path)
				}
				return paths
			}
		}
		return nil
	}
	apptest.Eventually(t, "the running app to share proj with fs", func() (bool, string) {
		got := sees()
		return slices.Equal(got, []string{root}), strings.Join(got, " ")
	})
	// Gone where no watch looks: the app's check finds it, and fs sees
	// nothing the moment the command returns.
	away(true)
	checkFails("missing: stat ")
	if got := sees(); len(got) != 0 {
		t.Fatalf("fs sees %q after roots check found the folder gone", got)
	}
	away(false)
	if out := mustRun(t, state, "roots", "check", root, "--json"); !strings.Contains(out, `"health": "ok"`) {
		t.Errorf("roots check --json: %s", out)
	}
	if got := sees(); !slices.Equal(got, []string{root}) {
		t.Errorf("fs sees %q after roots check found the folder back", got)
	}

	mustRun(t, state, "roots", "disable", "proj")
	for _, args := range [][]string{{"roots", "check", "proj"}, {"roots", "check", "nope"}, {"roots", "check"}} {
		_, errOut, code := rootkeeper(t, state, args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("rootkeeper %q: exit %d, stderr %q", args, code, errOut)
		}
	}
	if _, errOut, _ := rootkeeper(t, state, "roots", "check", "proj"); !strings.Contains(errOut, "roots enable "+root) {
		t.Errorf("a disabled folder: %q does not say what to do", errOut)
	}
}
