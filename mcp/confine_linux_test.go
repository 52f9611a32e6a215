package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/control"
	"rootkeeper/mcp/confine"
)

// nosyServer builds mcp/confine/testdata/nosy, a server that ignores its
// roots and reads, lists and writes wherever it is told.
func nosyServer(t testing.TB) string { return apptest.Program(t, "mcp/confine/testdata/nosy") }

type nosyResult struct {
	Op, Path, Err, Got string
	OK                 bool
}

func nosyTry(t testing.TB, e *testEnv, server, op, path string) nosyResult {
	t.Helper()
	text, err := callText(t, e.m, server, "try", map[string]any{"op": op, "path": path})
	if err != nil {
		t.Fatalf("try %s %s: %v", op, path, err)
	}
	var r nosyResult
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatalf("try %s %s: %q: %v", op, path, text, err)
	}
	return r
}

func needLandlock(t testing.TB) int {
	t.Helper()
	abi, err := confine.ABI()
	if err != nil {
		t.Fatalf("Landlock: %v", err)
	}
	return abi
}

// waitRestarted waits until server is connected again with another pid
// than old, and returns the new status.
func (e *testEnv) waitRestarted(server string, old int) app.ServerStatus {
	e.t.Helper()
	apptest.Eventually(e.t, server+" restarted", func() (bool, string) {
		st := e.status(server)
		return st.State == app.ServerConnected && st.PID != old && e.m.Session(server) != nil, string(st.State) + " " + st.Error
	})
	return e.status(server)
}

// TestConfinedServerCannotIgnoreItsRoots runs the server that ignores
// roots, managed and confined: it can list its granted root but not a
// folder it names itself, read a file outside or write outside; a grant
// restarts it able to reach the new root, a revoke restarts it unable to
// reach the old one. Unconfined (the same binary, same calls) it reaches
// everything, so the test can tell.
func TestConfinedServerCannotIgnoreItsRoots(t *testing.T) {
	abi := needLandlock(t)
	bin := nosyServer(t)
	e := newEnv(t)
	a, b, outside := mkRoot(t, "granted"), mkRoot(t, "later"), mkRoot(t, "outside")
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(a, "a.txt"), []byte("A"), 0o600)
	os.WriteFile(filepath.Join(b, "b.txt"), []byte("B"), 0o600)
	e.update(func(s *app.State) error {
		if err := s.AddServer(app.Server{Name: "free", Type: app.TransportStdio, Command: bin}); err != nil {
			return err
		}
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: bin, Confine: true})
	})
	e.addRoots(a, b)
	e.grant("nosy", a)
	e.start(e.fastOptions())
	e.waitConnected("free")
	st := e.waitConnected("nosy")
	if st.LandlockABI != abi {
		t.Errorf("status LandlockABI = %d, want %d", st.LandlockABI, abi)
	}
	if e.status("free").LandlockABI != 0 {
		t.Errorf("the unconfined server reports Landlock ABI %d", e.status("free").LandlockABI)
	}

	planted := filepath.Join(outside, "planted.txt")
	for _, c := range []struct{ op, path string }{{"read", secret}, {"list", outside}, {"write", planted}, {"list", b}} {
		if r := nosyTry(t, e, "free", c.op, c.path); !r.OK {
			t.Fatalf("unconfined %s %s failed (%s): the test cannot tell", c.op, c.path, r.Err)
		}
		os.Remove(planted)
		r := nosyTry(t, e, "nosy", c.op, c.path)
		if r.OK || !strings.Contains(r.Err, "permission denied") {
			t.Errorf("confined %s %s: ok=%v err=%q got=%q; want permission denied", c.op, c.path, r.OK, r.Err, r.Got)
		}
	}
	if _, err := os.Stat(planted); err == nil {
		t.Errorf("the confined server planted %s", planted)
	}
	if r := nosyTry(t, e, "nosy", "list", a); !r.OK || r.Got != "a.txt" {
		t.Errorf("confined list of its granted root: %+v", r)
	}
	if r := nosyTry(t, e, "nosy", "write", filepath.Join(a, "new.txt")); !r.OK {
		t.Errorf("confined write in its granted root: %+v", r)
	}

	// A grant reaches the running server without a restart (its observer
	// hands it the new folder); a revoke restarts it.
	e.grant("nosy", b)
	apptest.Eventually(t, "the granted root listed by the same process", func() (bool, string) {
		r := nosyTry(t, e, "nosy", "list", b)
		return r.OK && r.Got == "b.txt", fmt.Sprintf("%+v", r)
	})
	if pid := e.status("nosy").PID; pid != st.PID {
		t.Errorf("the grant restarted the server: pid %d, was %d", pid, st.PID)
	}
	e.revoke("nosy", a)
	st = e.waitRestarted("nosy", st.PID)
	if r := nosyTry(t, e, "nosy", "list", a); r.OK || !strings.Contains(r.Err, "permission denied") {
		t.Errorf("after the revoke, the restarted server still lists the old root: %+v", r)
	}
	if r := nosyTry(t, e, "nosy", "read", filepath.Join(b, "b.txt")); !r.OK || r.Got != "B" {
		t.Errorf("after the revoke, read in the root it kept: %+v", r)
	}
	if st.LandlockABI != abi {
		t.Errorf("after restarts, LandlockABI = %d", st.LandlockABI)
	}
}

// TestConfinedServerFilesystem runs the real server-filesystem confined
// with two granted roots, started through its node_modules/.bin launcher,
// as a plain `node .../dist/index.js`, and through npx: it lists, reads and writes
// inside both, is refused outside, and runs with no_new_privs (the mark of
// the confining exec).
func TestConfinedServerFilesystem(t *testing.T) {
	needLandlock(t)
	bin := apptest.NPMServer(t, "mcp-server-filesystem")
	script, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(apptest.ModuleRoot(t), ".ci", "npm")
	for _, tc := range []struct {
		name string
		srv  app.Server
	}{
		{"launcher", app.Server{Command: bin}},
		{"node", app.Server{Command: node, Args: []string{script}}},
		// npx offline, finding the package in the project it runs in.
		{"npx", app.Server{Command: npx, Args: []string{"--offline", "--no-install", "mcp-server-filesystem"}, Cwd: project}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			a, b, outside := mkRoot(t, "alpha"), mkRoot(t, "beta"), mkRoot(t, "outside")
			os.WriteFile(filepath.Join(a, "hello.txt"), []byte("hello from alpha"), 0o600)
			os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s3cret"), 0o600)
			srv := tc.srv
			srv.Name, srv.Type, srv.Confine = "fs", app.TransportStdio, true
			e.update(func(s *app.State) error { return s.AddServer(srv) })
			e.addRoots(a, b)
			e.grant("fs", a, b)
			e.start(e.fastOptions())
			st := e.waitConnected("fs")
			if st.ServerName != "secure-filesystem-server" || st.LandlockABI == 0 {
				t.Errorf("status %+v: want server-filesystem, confined", st)
			}
			waitAllowed(t, e, "fs", a, b)
			if s, err := os.ReadFile("/proc/" + strconv.Itoa(st.PID) + "/status"); err != nil || !strings.Contains(string(s), "NoNewPrivs:\t1") {
				t.Errorf("server pid %d is not under no_new_privs (%v)", st.PID, err)
			}

			text, err := callText(t, e.m, "fs", "list_directory", map[string]any{"path": a})
			if err != nil || !strings.Contains(text, "hello.txt") {
				t.Errorf("list_directory %s: %q, %v", a, text, err)
			}
			text, err = callText(t, e.m, "fs", "read_text_file", map[string]any{"path": filepath.Join(a, "hello.txt")})
			if err != nil || !strings.Contains(text, "hello from alpha") {
				t.Errorf("read_text_file: %q, %v", text, err)
			}
			written := filepath.Join(b, "written.txt")
			text, err = callText(t, e.m, "fs", "write_file", map[string]any{"path": written, "content": "confined write"})
			if got, _ := os.ReadFile(written); err != nil || string(got) != "confined write" {
				t.Errorf("write_file %s: %q, %v; file holds %q", written, text, err, got)
			}
			text, err = callText(t, e.m, "fs", "read_text_file", map[string]any{"path": filepath.Join(outside, "secret.txt")})
			if err == nil && strings.Contains(text, "s3cret") {
				t.Errorf("read outside its roots: %q", text)
			}
			// Observed, what node and the launchers probe while they start
			// and serve is never asked about (server-filesystem checks
			// paths itself, so the read outside never reaches the kernel).
			if rs := e.core.Snapshot().State.RequestsFor("fs"); len(rs) != 0 {
				t.Errorf("requests raised by starting and using server-filesystem: %+v", rs)
			}
		})
	}
}

// TestRevokeEndsAConfinedServerWithoutGrace: a confined server that ignores
// the end of its stdin and SIGTERM keeps reaching a revoked folder for as
// long as it runs, so a revoke kills it at once rather than after the
// usual grace (here far longer than the test waits), and its successor
// cannot reach the folder.
func TestRevokeEndsAConfinedServerWithoutGrace(t *testing.T) {
	needLandlock(t)
	e := newEnv(t)
	a, b := mkRoot(t, "revoked"), mkRoot(t, "kept")
	flag := filepath.Join(b, "linger")
	os.WriteFile(flag, nil, 0o600)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: nosyServer(t), Args: []string{"-linger", flag}, Confine: true})
	})
	e.addRoots(a, b)
	e.grant("nosy", a, b)
	opts := e.fastOptions()
	opts.StopGrace, opts.KillAfter = time.Minute, time.Minute
	e.start(opts)
	t.Cleanup(func() { os.Remove(flag) }) // after start: runs before the manager stops
	st := e.waitConnected("nosy")
	if r := nosyTry(t, e, "nosy", "list", a); !r.OK {
		t.Fatalf("list of a granted root: %+v", r)
	}
	e.revoke("nosy", a)
	e.waitRestarted("nosy", st.PID)
	if err := syscall.Kill(st.PID, 0); err == nil {
		t.Errorf("the old server (pid %d) still runs after the revoke", st.PID)
	}
	if r := nosyTry(t, e, "nosy", "list", a); r.OK {
		t.Errorf("after the revoke the server still lists %s", a)
	}
}

// TestTempFolderStaysInItsPlace: a confined server's private temp folder
// is its own whatever its name (".." must not make it the state folder,
// which holds the decisions), is outside the state folder so that its
// TMPDIR does not lead there (the control socket is in it), is found
// again through STATE_DIR/tmp/server-NAME, and goes with the server.
func TestTempFolderStaysInItsPlace(t *testing.T) {
	needLandlock(t)
	e := newEnv(t)
	seen := map[string]bool{}
	for _, name := range []string{"..", "."} {
		p, err := TempFolder(e.dir, name)
		if err != nil || strings.HasPrefix(p, e.dir) || strings.Contains(p, filepath.Base(e.dir)) || seen[p] {
			t.Errorf("TempFolder(%q) = %q, %v: want a folder of its own outside %s", name, p, err, e.dir)
		}
		seen[p] = true
		if again, _ := TempFolder(e.dir, name); again != p {
			t.Errorf("TempFolder(%q) again = %q, first %q", name, again, p)
		}
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("TempFolder(%q): %v %v; want a folder, mode 0700", name, fi.Mode(), err)
		}
		if l, err := os.Readlink(filepath.Join(e.dir, "tmp", "server-"+name)); err != nil || l != p {
			t.Errorf("link for %q: %q, %v", name, l, err)
		}
	}
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "..", Type: app.TransportStdio, Command: nosyServer(t), Confine: true})
	})
	e.start(e.fastOptions())
	e.waitConnected("..")
	temp, _ := TempFolder(e.dir, "..")
	if r := nosyTry(t, e, "..", "write", filepath.Join(temp, "scratch")); !r.OK {
		t.Errorf("write in its temp folder: %+v", r)
	}
	if r := nosyTry(t, e, "..", "write", filepath.Join(e.dir, "planted")); r.OK {
		t.Errorf("the server wrote into the state folder")
	}
	e.update(func(s *app.State) error { return s.RemoveServer("..") })
	apptest.Eventually(t, "the temp folder removed with its server", func() (bool, string) {
		_, err := os.Stat(temp)
		_, lerr := os.Lstat(filepath.Join(e.dir, "tmp", "server-.."))
		return os.IsNotExist(err) && os.IsNotExist(lerr), fmt.Sprint(err, lerr)
	})
}

// TestConfineSwitchRestartsTheServer turns Confine on for a server that is
// running (the window's switch, `servers set --confine`): the running copy,
// which reached everything, is replaced by a confined one that keeps its
// grants and cannot read outside them; turning it off again restarts it
// free. A switch that only changed the saved flag would leave the
// unconfined process serving until its next restart.
func TestConfineSwitchRestartsTheServer(t *testing.T) {
	abi := needLandlock(t)
	bin := nosyServer(t)
	e := newEnv(t)
	granted, outside := mkRoot(t, "granted"), mkRoot(t, "outside")
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(granted, "a.txt"), []byte("A"), 0o600)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: bin})
	})
	e.addRoots(granted)
	e.grant("nosy", granted)
	e.start(e.fastOptions())
	st := e.waitConnected("nosy")
	if r := nosyTry(t, e, "nosy", "read", secret); !r.OK {
		t.Fatalf("unconfined read outside failed (%s): the test cannot tell", r.Err)
	}

	setConfine := func(on bool) {
		e.update(func(s *app.State) error { return s.SetConfinement("nosy", on) })
	}
	setConfine(true)
	st = e.waitRestarted("nosy", st.PID)
	if st.LandlockABI != abi {
		t.Errorf("after Confine on, LandlockABI = %d, want %d", st.LandlockABI, abi)
	}
	if r := nosyTry(t, e, "nosy", "read", secret); r.OK || !strings.Contains(r.Err, "permission denied") {
		t.Errorf("confined read outside: %+v; want permission denied", r)
	}
	if r := nosyTry(t, e, "nosy", "read", filepath.Join(granted, "a.txt")); !r.OK || r.Got != "A" {
		t.Errorf("confined read in its granted root (the grant must survive the switch): %+v", r)
	}

	setConfine(false)
	st = e.waitRestarted("nosy", st.PID)
	if st.LandlockABI != 0 {
		t.Errorf("after Confine off, LandlockABI = %d", st.LandlockABI)
	}
	if r := nosyTry(t, e, "nosy", "read", secret); !r.OK {
		t.Errorf("after Confine off, read outside: %+v", r)
	}
}

// TestConfinedServerCannotCallTheApp: a managed confined server cannot
// connect to the app's control socket in the state folder (nor read the
// token beside it), while the same server unconfined can connect: the
// socket answers its owner, and the servers run as the owner.
func TestConfinedServerCannotCallTheApp(t *testing.T) {
	needLandlock(t)
	bin := nosyServer(t)
	e := newEnv(t)
	ctl, err := control.Listen(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { ctl.Serve(ctx); close(served) }()
	t.Cleanup(func() { cancel(); <-served })
	e.update(func(s *app.State) error {
		if err := s.AddServer(app.Server{Name: "free", Type: app.TransportStdio, Command: bin}); err != nil {
			return err
		}
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: bin, Confine: true})
	})
	e.start(e.fastOptions())
	e.waitConnected("free")
	e.waitConnected("nosy")
	sock := filepath.Join(e.dir, control.SocketName)
	if r := nosyTry(t, e, "free", "connect", sock); !r.OK {
		t.Fatalf("unconfined connect to the control socket failed (%s): the test cannot tell", r.Err)
	}
	if r := nosyTry(t, e, "nosy", "connect", sock); r.OK || !strings.Contains(r.Err, "permission denied") {
		t.Errorf("confined connect to the control socket: %+v; want permission denied", r)
	}
	if r := nosyTry(t, e, "nosy", "read", filepath.Join(e.dir, control.TokenName)); r.OK {
		t.Errorf("the confined server read the control token")
	}
}
