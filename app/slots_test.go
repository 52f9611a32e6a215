package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// slotWorld is a home with a few folders and files for slot tests.
type slotWorld struct {
	home, desk, work, proj, repo, db, script string
}

func newSlotWorld(t *testing.T) slotWorld {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := slotWorld{home: home, desk: filepath.Join(home, "Desktop"), work: filepath.Join(home, "work"),
		repo: filepath.Join(home, "repo"), db: filepath.Join(home, "data", "app.sqlite")}
	w.proj = filepath.Join(w.work, "proj")
	w.script = filepath.Join(home, "mcp", "server.js")
	for _, d := range []string{w.desk, w.proj, w.repo, filepath.Join(w.work, "stdio"), filepath.Dir(w.db), filepath.Dir(w.script)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(w.db, nil, 0o644)
	os.WriteFile(w.script, nil, 0o644)
	return w
}

func TestFindSlots(t *testing.T) {
	w := newSlotWorld(t)
	link := filepath.Join(w.home, "link")
	if err := os.Symlink(w.repo, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		srv  Server
		want []Slot
	}{
		{"positional, from home", Server{Args: []string{"-y", "pkg", "~/Desktop", "/no/such/dir"}},
			[]Slot{{Path: w.desk, Given: "~/Desktop", Arg: 2}}},
		{"flag and its value", Server{Args: []string{"server", "--repository", "~/repo", "--verbose"}},
			[]Slot{{Path: w.repo, Given: "~/repo", Arg: 2, Flag: "--repository"}}},
		{"flag=value", Server{Args: []string{"--db=" + w.db}},
			[]Slot{{Path: w.db, Given: w.db, Arg: 0, Flag: "--db=", File: true}}},
		{"a symlink resolves", Server{Args: []string{link}},
			[]Slot{{Path: w.repo, Given: link, Arg: 0}}},
		{"relative to the working folder, bare words are not", Server{Cwd: w.work, Args: []string{"./proj", "stdio"}},
			[]Slot{{Path: w.proj, Given: "./proj", Arg: 0}}},
		{"no working folder: relative is unknown", Server{Args: []string{"./proj"}}, nil},
		{"env value and path list", Server{Env: map[string]string{"GIT_BASE_DIR": w.work, "PATHS": w.desk + ":/nope:" + w.repo, "TOKEN": "x"}},
			[]Slot{{Path: w.work, Given: w.work, Arg: -1, Env: "GIT_BASE_DIR"},
				{Path: w.desk, Given: w.desk, Arg: -1, Env: "PATHS", Elem: 1},
				{Path: w.repo, Given: w.repo, Arg: -1, Env: "PATHS", Elem: 3}}},
		{"the server's own script is no slot", Server{Args: []string{w.script}}, nil},
		{"a URL is not split at its colons into paths", Server{Args: []string{"redis://:pw@redis.example.com:6379"},
			Env: map[string]string{"DATABASE_URL": "postgres://:pw@db.example.com/db?sslmode=require"}}, nil},
		{"kept arguments are no slots", Server{Args: []string{w.desk, "--root=" + w.repo}, KeepArgs: []string{w.desk, w.repo}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.srv.Name, tc.srv.Type, tc.srv.Command = "s", TransportStdio, "server"
			if d := cmp.Diff(tc.want, FindSlots(tc.srv, w.home)); d != "" {
				t.Errorf("slots (-want +got):\n%s", d)
			}
		})
	}
	if got := FindSlots(Server{Name: "r", Type: TransportHTTP, URL: "https://x" + w.desk}, w.home); got != nil {
		t.Errorf("a remote server has slots: %+v", got)
	}
}

// PutServer keeps a configuration's bytes: what the person wrote is what
// runs, folders included, and each folder is a question.
func TestPutServerKeepsTheConfigurationWhole(t *testing.T) {
	w := newSlotWorld(t)
	st := &State{}
	srv := Server{Name: "argy", Type: TransportStdio, Command: "server", Args: []string{"--repository", "~/repo", "--verbose"},
		Env: map[string]string{"GIT_BASE_DIR": w.work}}
	res, err := st.PutServer(srv, PutOptions{Home: w.home})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := st.Server("argy")
	if d := cmp.Diff(srv.Args, got.Args); d != "" {
		t.Errorf("stored args (-want +got):\n%s", d)
	}
	if got.Env["GIT_BASE_DIR"] != w.work {
		t.Errorf("env lost its folder: %v", got.Env)
	}
	var asked []string
	for _, r := range st.RequestsFor("argy") {
		asked = append(asked, r.Path)
	}
	if d := cmp.Diff([]string{w.repo, w.work}, asked); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
	if len(res.Asked) != 2 || res.Replaced {
		t.Errorf("result %+v", res)
	}
	// Again without Replace: refused, nothing changed.
	if _, err := st.PutServer(srv, PutOptions{Home: w.home}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("a second put without replace: %v", err)
	}
}

// Every edit path goes through PutServer, and an edit that does not state
// a setting keeps it: confinement is never silently dropped.
func TestPutServerCarriesSettingsOver(t *testing.T) {
	w := newSlotWorld(t)
	base := Server{Name: "fs", Type: TransportStdio, Command: "mcp-server-filesystem", Args: []string{w.desk}}
	for _, tc := range []struct {
		name  string // the edit path it stands for
		given Setting
		edit  func(*Server)
		want  func(Server) bool
	}{
		{"import --replace (no settings)", 0, func(s *Server) {}, func(s Server) bool { return s.Confine && s.Mode() == RootsEnv && s.HostRoots == HostRootsFollow }},
		{"hosts protect (no settings)", 0, func(s *Server) { s.Args = append(s.Args, "--x") }, func(s Server) bool { return s.Confine && s.Mode() == RootsEnv }},
		{"window edit (roots mode and sampling)", SetRootsMode | SetSampling, func(s *Server) { s.RootsMode = RootsArgs },
			func(s Server) bool { return s.Confine && s.Mode() == RootsArgs && s.HostRoots == HostRootsFollow }},
		{"paste of a server with a roots mode", SetRootsMode, func(s *Server) { s.RootsMode = RootsProtocol },
			func(s Server) bool { return s.Confine && s.Mode() == RootsProtocol }},
		{"servers add --replace --confine=false", SetConfine, func(s *Server) { s.Confine = false }, func(s Server) bool { return !s.Confine && s.Mode() == RootsEnv }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &State{}
			old := base
			old.Confine, old.RootsMode, old.HostRoots = true, RootsEnv, HostRootsFollow
			if _, err := st.PutServer(old, PutOptions{Home: w.home}); err != nil {
				t.Fatal(err)
			}
			next := base
			next.Args = slices.Clone(base.Args)
			tc.edit(&next)
			if _, err := st.PutServer(next, PutOptions{Replace: true, Given: tc.given, Home: w.home}); err != nil {
				t.Fatal(err)
			}
			got, _ := st.Server("fs")
			if !tc.want(got) {
				t.Errorf("after the edit: confine %v, roots mode %q, host roots %q", got.Confine, got.Mode(), got.HostRoots)
			}
		})
	}
}

func TestHoldFollowsTheSlots(t *testing.T) {
	w := newSlotWorld(t)
	st := State{}
	srv := Server{Name: "git", Type: TransportStdio, Command: "git-mcp-server", Env: map[string]string{"GIT_BASE_DIR": w.work},
		Args: []string{"--db", w.db}}
	if _, err := st.PutServer(srv, PutOptions{Home: w.home}); err != nil {
		t.Fatal(err)
	}
	snap := func() *Snapshot { return &Snapshot{State: st.Clone()} }
	h := HoldOf(snap(), "git")
	if h == nil || !h.Waiting() || !slices.Equal(h.Undecided, []string{w.db, w.work}) {
		t.Fatalf("undecided: hold %+v", h)
	}
	if txt := h.Text(w.home); !strings.Contains(txt, "waiting for your decision on ~/data/app.sqlite, ~/work") {
		t.Errorf("hold text %q", txt)
	}
	// The folder allowed, the file denied: held, not waiting.
	if err := st.DecideRequest(Decision{Server: "git", Root: w.work, Verdict: Allow, Scope: Always}); err != nil {
		t.Fatal(err)
	}
	if err := st.DecideRequest(Decision{Server: "git", Root: w.db, Verdict: Deny, Scope: Always}); err != nil {
		t.Fatal(err)
	}
	if _, isRoot := st.Root(w.db); isRoot {
		t.Error("a file slot became a root")
	}
	h = HoldOf(snap(), "git")
	if h == nil || h.Waiting() || !slices.Equal(h.Denied, []string{w.db}) || len(h.Undecided) != 0 {
		t.Fatalf("denied: hold %+v", h)
	}
	if txt := h.Text(w.home); !strings.Contains(txt, "needs ~/data/app.sqlite, which you denied") || !strings.Contains(txt, "rootkeeper grant git") {
		t.Errorf("hold text %q", txt)
	}
	// Both allowed: it may start.
	if err := st.Decide(Decision{Server: "git", Root: w.db, Verdict: Allow, Scope: Always}); err != nil {
		t.Fatal(err)
	}
	if h := HoldOf(snap(), "git"); h != nil {
		t.Fatalf("all allowed: hold %+v", h)
	}
	if got := AllowedSlotPaths(snap(), "git"); !slices.Equal(got, []string{w.db, w.work}) {
		t.Errorf("allowed slots %q", got)
	}
	// The folder switched off for everyone, or sharing paused: held.
	st.SetEnabled(w.work, false)
	if h := HoldOf(snap(), "git"); h == nil || !slices.Equal(h.Off, []string{w.work}) {
		t.Errorf("switched off: hold %+v", h)
	}
	st.SetEnabled(w.work, true)
	st.Paused = true
	if h := HoldOf(snap(), "git"); h == nil || !h.Paused {
		t.Errorf("paused: hold %+v", h)
	}
	st.Paused = false
	// Revoked: undecided again, held.
	st.Revoke("git", w.work)
	if h := HoldOf(snap(), "git"); h == nil || !slices.Equal(h.Undecided, []string{w.work}) {
		t.Errorf("revoked: hold %+v", h)
	}
	// An allowed folder that holds the slot allows it.
	parent := filepath.Dir(w.work)
	st.AddRoot(Root{Path: parent, Enabled: true})
	st.Decide(Decision{Server: "git", Root: parent, Verdict: Allow, Scope: Always})
	if h := HoldOf(snap(), "git"); h != nil {
		t.Errorf("inside an allowed folder: hold %+v", h)
	}
	// A server with no slots is never held, paused or not.
	st.PutServer(Server{Name: "plain", Type: TransportStdio, Command: "x"}, PutOptions{})
	st.Paused = true
	if h := HoldOf(snap(), "plain"); h != nil {
		t.Errorf("a server without slots is held: %+v", h)
	}
}

// A state file of version 1 had folders taken off: the servers are marked
// for repair, and the folders still asked about are lost (held) until the
// server is defined again.
func TestMigrationMarksServersWhoseFoldersWereTakenOff(t *testing.T) {
	v1 := `{"version": 1, "roots": [], "decisions": [],
	  "servers": [{"name": "fs", "type": "stdio", "command": "mcp-server-filesystem"},
	              {"name": "remote", "type": "http", "url": "https://x.example/mcp"}],
	  "requests": [{"server": "fs", "path": "/home/p/Desktop", "from": "command-line", "first": "2026-01-02T03:04:05Z", "last": "2026-01-02T03:04:05Z"},
	               {"server": "fs", "path": "/home/p/src", "from": "claude-code 2.1", "first": "2026-01-02T03:04:05Z", "last": "2026-01-02T03:04:05Z"}]}`
	st, err := decodeState([]byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := st.Server("fs")
	if !fs.FoldersTakenOff || !slices.Equal(fs.Lost, []string{"/home/p/Desktop"}) {
		t.Errorf("fs after migration: %+v", fs)
	}
	if r, _ := st.Server("remote"); r.FoldersTakenOff || r.Lost != nil {
		t.Errorf("a remote server was marked: %+v", r)
	}
	h := HoldOf(&Snapshot{State: st}, "fs")
	if h == nil || !strings.Contains(h.Text(""), "lost /home/p/Desktop") || !strings.Contains(h.Text(""), "servers add fs --replace") {
		t.Errorf("hold %+v", h)
	}
	// Defined again: whole, nothing lost.
	w := newSlotWorld(t)
	if _, err := st.PutServer(Server{Name: "fs", Type: TransportStdio, Command: "mcp-server-filesystem", Args: []string{w.desk}},
		PutOptions{Replace: true, Home: w.home, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	fs, _ = st.Server("fs")
	if fs.FoldersTakenOff || fs.Lost != nil || len(fs.Slots) != 1 {
		t.Errorf("fs defined again: %+v", fs)
	}
	if _, open := st.Request("fs", "/home/p/Desktop"); open {
		t.Error("the lost folder's request outlived the new definition")
	}
	if _, open := st.Request("fs", "/home/p/src"); !open {
		t.Error("a host's request went with the new definition")
	}
}
