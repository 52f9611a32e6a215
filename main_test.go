package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/cli"
)

// These tests run the real binary, as a person or a script would.

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rootkeeper-bin-")
	if err != nil {
		panic(err)
	}
	os.Chmod(dir, 0o755) // the permission test runs it as nobody
	binary = filepath.Join(dir, "rootkeeper")
	// With the seam only a test binary has: the organisation's policy is
	// read from ROOTKEEPER_TEST_POLICY_FILE when that is set
	// (app/policy/seam_test_policy.go); the machine's own file is never
	// touched by a test.
	build := exec.Command("go", "build", "-tags", "rootkeeper_policytest", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building rootkeeper: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func rootkeeper(t *testing.T, stateDir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--state-dir", stateDir}, args...)...)
	cmd.Env = serverEnv()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// rkIn runs rootkeeper on stateDir with the environment env, fails the
// test on an error, and returns what it printed (stdout and stderr).
func rkIn(t *testing.T, env []string, stateDir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--state-dir", stateDir}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rootkeeper %q: %v\n%s", args, err, out)
	}
	return string(out)
}

func mustRun(t *testing.T, stateDir string, args ...string) string {
	t.Helper()
	out, errOut, code := rootkeeper(t, stateDir, args...)
	if code != 0 {
		t.Fatalf("rootkeeper %q: exit %d: %s", args, code, errOut)
	}
	return out
}

func TestScanBadFolderIsAnInputError(t *testing.T) {
	_, errOut, code := rootkeeper(t, t.TempDir(), "scan", "/no/such/folder")
	if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "/no/such/folder") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = rootkeeper(t, t.TempDir(), "scan", "--depth", "deep")
	if code != 2 || !strings.Contains(errOut, "deep") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// A folder the person cannot read is bad input too. Root reads a chmod 000
// folder anyway, so the scan runs unprivileged (as nobody, when the tests
// run as root).
func TestScanUnreadableFolderIsAnInputError(t *testing.T) {
	tree := apptest.NobodyDir(t)
	state := filepath.Join(tree, "state")
	locked := filepath.Join(tree, "locked")
	os.Mkdir(state, 0o700)
	if apptest.Privileged() {
		os.Chown(state, apptest.Nobody, apptest.Nobody)
	}
	os.Mkdir(locked, 0o000)
	cmd := exec.Command(binary, "--state-dir", state, "scan", locked)
	cmd.Env = append(serverEnv(), "HOME="+state)
	apptest.RunAsNobody(t, cmd)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 {
		t.Fatalf("scan of a chmod 000 folder, unprivileged: %v, stderr %q", err, errOut.String())
	}
	if msg := errOut.String(); strings.Count(msg, "\n") != 1 || !strings.Contains(msg, locked) || !strings.Contains(msg, "permission denied") {
		t.Fatalf("stderr %q", msg)
	}
}

func TestScanFindsARepositoryAndPrintsJSONLines(t *testing.T) {
	tree := t.TempDir()
	repo := filepath.Join(tree, "my repo#1")
	os.MkdirAll(repo, 0o755)
	git := exec.Command("git", "init", "-q", "-b", "trunk", repo)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	os.MkdirAll(filepath.Join(tree, "node_modules", "dep"), 0o755)
	os.WriteFile(filepath.Join(tree, "node_modules", "dep", "package.json"), []byte("{}"), 0o644)
	out, errOut, code := rootkeeper(t, t.TempDir(), "scan", "--json", tree)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("want exactly the repository (node_modules skipped), got %q", out)
	}
	var c struct {
		app.Candidate
		URI string `json:"uri"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &c); err != nil {
		t.Fatal(err)
	}
	if c.Path != repo || c.Kind != "repo" || c.Branch != "trunk" || c.URI != app.URIFromPath(repo) {
		t.Fatalf("candidate = %+v", c)
	}
	if !strings.Contains(errOut, "found 1") {
		t.Fatalf("summary line: %q", errOut)
	}
}

// serverEnv is this process's environment with LANG=C.UTF-8, as on most
// servers and containers: Fyne's lang package complains about that locale
// while it initialises, and none of it may reach a command's stderr.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LANG=") && !strings.HasPrefix(kv, "LC_ALL=") && !strings.HasPrefix(kv, "LC_MESSAGES=") {
			env = append(env, kv)
		}
	}
	return append(env, "LANG=C.UTF-8")
}

// status asks a running headless app (through the control socket) what
// each server was last sent.
func liveStatus(t *testing.T, stateDir string) cli.Status {
	t.Helper()
	var st cli.Status
	out := mustRun(t, stateDir, "status", "--json")
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return st
}

// headlessApp is `rootkeeper headless` on a state folder, stopped when the
// test ends at the latest.
type headlessApp struct {
	cmd    *exec.Cmd
	logs   syncBuffer
	exited chan error
	once   sync.Once
	err    error
}

// logText is what the app has logged so far.
func (h *headlessApp) logText() string { return h.logs.String() }

// syncBuffer is a buffer a process writes while a test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startHeadless(t *testing.T, state string) *headlessApp {
	t.Helper()
	return startHeadlessIn(t, serverEnv(), state)
}

// startHeadlessIn is startHeadless with the environment env.
func startHeadlessIn(t *testing.T, env []string, state string) *headlessApp {
	t.Helper()
	h := &headlessApp{cmd: exec.Command(binary, "--state-dir", state, "headless"), exited: make(chan error, 1)}
	h.cmd.Env = env
	h.cmd.Stderr = &h.logs
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.exited <- h.cmd.Wait() }()
	t.Cleanup(func() {
		h.stop()
		if t.Failed() {
			t.Logf("headless log:\n%s", h.logs.String())
		}
	})
	return h
}

// stop sends SIGTERM and waits up to 15 s (then kills); it returns how the
// process ended, the same on every call.
func (h *headlessApp) stop() error {
	h.once.Do(func() {
		h.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case h.err = <-h.exited:
		case <-time.After(apptest.Patience):
			h.cmd.Process.Kill()
			h.err = fmt.Errorf("did not stop within %v of SIGTERM (hung?)", apptest.Patience)
		}
	})
	return h.err
}

// waitFor waits until cond holds (apptest.Eventually, for conditions with
// nothing more to say about themselves).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	apptest.Eventually(t, what, func() (bool, string) { return cond(), "" })
}

func lastSent(st cli.Status, server string) ([]string, *app.ServerStatus) {
	for _, s := range st.Servers {
		if s.Name == server && s.Live != nil {
			return s.Live.LastSent, s.Live
		}
	}
	return nil, nil
}

// A headless app follows grants, revokes and pauses typed in another shell,
// and `status --json` from that shell shows what the server was sent.
func TestHeadlessFollowsTheCommandLine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("unix sockets and the npm server setup are exercised on Linux")
	}
	server := apptest.NPMServer(t, "mcp-server-filesystem")
	state := t.TempDir()
	home := t.TempDir()
	a := filepath.Join(home, "project ä#1")
	b := filepath.Join(home, "100% done")
	os.MkdirAll(a, 0o755)
	os.MkdirAll(b, 0o755)
	mustRun(t, state, "roots", "add", a, "--enable")
	mustRun(t, state, "roots", "add", b, "--enable")
	mustRun(t, state, "servers", "add", "fs", "--", server)

	headless := startHeadless(t, state)

	waitFor(t, "the server to connect", func() bool {
		_, live := lastSent(liveStatus(t, state), "fs")
		return live != nil && live.State == app.ServerConnected
	})
	fi, err := os.Stat(filepath.Join(state, "control.sock"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("control socket: %v %v", fi, err)
	}
	if sent, _ := lastSent(liveStatus(t, state), "fs"); len(sent) != 0 {
		t.Fatalf("before any grant the server was sent %q", sent)
	}

	uriA, uriB := app.URIFromPath(a), app.URIFromPath(b)
	expect := func(what string, want ...string) {
		t.Helper()
		slices.Sort(want)
		waitFor(t, what, func() bool {
			sent, _ := lastSent(liveStatus(t, state), "fs")
			return slices.Equal(sent, want) || (len(want) == 0 && len(sent) == 0)
		})
	}
	mustRun(t, state, "grant", "fs", a)
	mustRun(t, state, "grant", "fs", b)
	expect("both roots sent", uriA, uriB)
	mustRun(t, state, "revoke", "fs", b)
	expect("b withdrawn", uriA)
	mustRun(t, state, "pause")
	expect("nothing while paused")
	mustRun(t, state, "resume")
	expect("a again", uriA)

	// A second headless app on the same state folder is refused.
	_, errOut, code := rootkeeper(t, state, "headless")
	if code != 1 || !strings.Contains(errOut, "already running") {
		t.Fatalf("second headless: exit %d %q", code, errOut)
	}

	_, live := lastSent(liveStatus(t, state), "fs")
	if err := headless.stop(); err != nil {
		t.Fatalf("headless did not exit cleanly on SIGTERM: %v", err)
	}
	if live != nil && live.PID > 0 {
		if pidExists(live.PID) {
			t.Fatalf("server process %d outlived the app", live.PID)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "control.sock")); !os.IsNotExist(err) {
		t.Fatalf("control socket left behind: %v", err)
	}
}
