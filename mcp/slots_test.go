package mcp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// gitRepo makes a git repository at dir with one commit.
func gitRepo(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
}

// put stores srv through app's one way of putting a server.
func (e *testEnv) put(srv app.Server) app.Server {
	e.t.Helper()
	var res app.PutResult
	e.update(func(s *app.State) error {
		var err error
		res, err = s.PutServer(srv, app.PutOptions{Replace: true})
		return err
	})
	return res.Server
}

// allowSlot decides a slot of server as the request dialog does.
func (e *testEnv) allowSlot(server, path string) {
	e.t.Helper()
	e.update(func(s *app.State) error {
		return s.DecideRequest(app.Decision{Server: server, Root: path, Verdict: app.Allow, Scope: app.Always, By: app.ByDialog})
	})
	e.core.SetHealth(path, app.CheckAccess(path, 0))
}

func (e *testEnv) waitHeld(name, contains string) {
	e.t.Helper()
	apptest.Eventually(e.t, name+" held", func() (bool, string) {
		st := e.status(name)
		return st.State == app.ServerHeld && strings.Contains(st.Error, contains), string(st.State) + ": " + st.Error
	})
}

// The real git-mcp-server limits itself to GIT_BASE_DIR. Rootkeeper keeps
// that limit: the server is held until the person allows the folder, then
// runs exactly as configured, refusing a repository outside it; revoking
// the folder stops it.
func TestGitServerKeepsItsOwnLimit(t *testing.T) {
	git := apptest.NPMServer(t, "git-mcp-server")
	e := newEnv(t)
	base := mkRoot(t, "work")
	inside, outside := filepath.Join(base, "inside"), filepath.Join(mkRoot(t, "elsewhere"), "outside")
	gitRepo(t, inside)
	gitRepo(t, outside)
	srv := e.put(app.Server{Name: "git", Type: app.TransportStdio, Command: git, Env: map[string]string{"GIT_BASE_DIR": base}})
	if len(srv.Slots) != 1 || srv.Slots[0].Env != "GIT_BASE_DIR" || srv.Env["GIT_BASE_DIR"] != base {
		t.Fatalf("stored as %+v", srv)
	}
	e.start(e.fastOptions())
	e.waitHeld("git", "waiting for your decision on "+base)
	if st := e.status("git"); st.PID != 0 {
		t.Fatalf("a held server runs: %+v", st)
	}

	e.allowSlot("git", base)
	e.waitConnected("git")
	text, err := callText(t, e.m, "git", "git_status", map[string]any{"path": outside})
	if err != nil || !strings.Contains(text, "Path traversal") {
		t.Fatalf("git_status outside GIT_BASE_DIR answered: %v %q", err, text)
	}
	text, err = callText(t, e.m, "git", "git_status", map[string]any{"path": inside})
	if err != nil || !strings.Contains(text, `"success": true`) {
		t.Fatalf("git_status inside GIT_BASE_DIR: %v %q", err, text)
	}

	e.revoke("git", base)
	e.waitHeld("git", "waiting for your decision on "+base)
}

// server-filesystem given two folders runs only once both are allowed,
// then with both on its command line (and in roots/list).
func TestFilesystemWithTwoFoldersWaitsForBoth(t *testing.T) {
	fs := apptest.NPMServer(t, "mcp-server-filesystem")
	e := newEnv(t)
	a, b := mkRoot(t, "a"), mkRoot(t, "b")
	e.put(app.Server{Name: "fs", Type: app.TransportStdio, Command: fs, Args: []string{a, b}})
	e.start(e.fastOptions())
	e.allowSlot("fs", a)
	e.waitHeld("fs", "waiting for your decision on "+b)
	e.allowSlot("fs", b)
	e.waitConnected("fs")
	waitAllowed(t, e, "fs", a, b)
}
