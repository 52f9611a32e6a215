package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/mcp/confine"
)

// reachSetup is a state folder with the confined test server nosy allowed
// one folder, a folder secret it was not given with a.txt and b.txt, and a
// reach wait of two minutes: a call held for an answer nobody gives would
// hold the test that long, and leave its request with calls listed.
func reachSetup(t *testing.T) (state, secret string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("Landlock is Linux's")
	}
	if _, err := confine.ABI(); err != nil {
		t.Fatalf("Landlock: %v", err)
	}
	nosy := apptest.Program(t, "mcp/confine/testdata/nosy")
	state = t.TempDir()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	folder := filepath.Join(base, "project")
	secret = filepath.Join(base, "secret")
	os.Mkdir(folder, 0o755)
	os.Mkdir(secret, 0o755)
	os.WriteFile(filepath.Join(secret, "a.txt"), []byte("secret a"), 0o600)
	os.WriteFile(filepath.Join(secret, "b.txt"), []byte("secret b"), 0o600)
	mustRun(t, state, "servers", "add", "nosy", "--confine", "--", nosy)
	mustRun(t, state, "roots", "add", folder, "--enable")
	mustRun(t, state, "grant", "nosy", folder)
	mustRun(t, state, "settings", "reach-wait", "2m")
	return state, secret
}

// hostSession is a host's end of `rootkeeper bridge nosy`: it has
// initialized, and try sends nosy's try tool calls.
type hostSession struct {
	t    *testing.T
	in   io.WriteCloser
	mu   sync.Mutex
	next int
	wait map[int]chan string
}

func startHostSession(t *testing.T, state string) *hostSession {
	t.Helper()
	br := exec.Command(binary, "--state-dir", state, "bridge", "nosy")
	br.Env = serverEnv()
	in, _ := br.StdinPipe()
	out, _ := br.StdoutPipe()
	var logs strings.Builder
	br.Stderr = &logs
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	h := &hostSession{t: t, in: in, next: 2, wait: map[int]chan string{1: make(chan string, 1)}}
	t.Cleanup(func() {
		in.Close()
		br.Wait()
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", logs.String())
		}
	})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m struct {
				ID *int `json:"id"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
				continue
			}
			h.mu.Lock()
			ch := h.wait[*m.ID]
			h.mu.Unlock()
			if ch != nil {
				ch <- sc.Text()
			}
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, ch := range h.wait {
			select {
			case ch <- "the bridge ended":
			default:
			}
		}
	}()
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test-host","version":"1"}}}`+"\n")
	if line := <-h.wait[1]; !strings.Contains(line, `"result"`) {
		t.Fatalf("initialize: %s", line)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return h
}

// try sends nosy's try tool call; the tool's answer comes on the channel.
func (h *hostSession) try(op, path string) <-chan string {
	h.mu.Lock()
	id := h.next
	h.next++
	ch := make(chan string, 1)
	h.wait[id] = ch
	h.mu.Unlock()
	args, _ := json.Marshal(map[string]any{"name": "try", "arguments": map[string]string{"op": op, "path": path}})
	io.WriteString(h.in, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`+"\n", id, args))
	return ch
}

// reachRequest is nosy's open request for folder in `status --json`.
func reachRequest(t *testing.T, state, folder string) (app.Request, bool) {
	t.Helper()
	for _, s := range liveStatus(t, state).Servers {
		for _, r := range s.Requests {
			if s.Name == "nosy" && r.Path == folder {
				return r, true
			}
		}
	}
	return app.Request{}, false
}

// TestReachWithNobodyToAsk: a host runs `rootkeeper bridge` for a confined
// server, with no app running and with the app running headless; the
// server reads a file in a folder it was not given. Nobody can be asked, so
// the read is refused at once (its answer comes back with no one doing
// anything, and the request was never one that held calls); the request
// waits in `status`, saying so; a second read there is refused at once as
// well. Allowing the folder then lets the next read through.
func TestReachWithNobodyToAsk(t *testing.T) {
	for _, mode := range []string{"no app", "headless"} {
		t.Run(mode, func(t *testing.T) {
			state, secret := reachSetup(t)
			if mode == "headless" {
				startHeadless(t, state)
				waitFor(t, "the headless app", func() bool { return liveStatus(t, state).Running })
			}
			h := startHostSession(t, state)
			a := filepath.Join(secret, "a.txt")
			if line := <-h.try("read", a); !strings.Contains(line, "permission denied") || strings.Contains(line, "secret a") {
				t.Fatalf("the read with nobody to ask: %s", line)
			}
			var req app.Request
			waitFor(t, "the request in status --json", func() bool {
				var ok bool
				req, ok = reachRequest(t, state, secret)
				return ok
			})
			if req.From != app.FromReach || req.Tried != a || req.Op != app.OpRead || !req.Unasked || len(req.Calls) != 0 {
				t.Errorf("request %+v; want an unasked read of %s holding no calls", req, a)
			}
			if out := mustRun(t, state, "status"); !strings.Contains(out, "nosy tried to read "+a+" — allow "+secret+"?") || !strings.Contains(out, "Nobody was there to ask when nosy tried this") {
				t.Errorf("status:\n%s", out)
			}
			if line := <-h.try("read", filepath.Join(secret, "b.txt")); !strings.Contains(line, "permission denied") {
				t.Fatalf("a second read there: %s", line)
			}
			if req, _ = reachRequest(t, state, secret); len(req.Calls) != 0 {
				t.Errorf("the second read was held: %+v", req)
			}
			if out := mustRun(t, state, "grant", "nosy", secret, "--once"); !strings.Contains(out, "nothing was let through") {
				t.Errorf("grant --once with nothing waiting said %q", out)
			}
			// The next attempt asks again (once the bridge has read the
			// state the command wrote: until then the old request counts).
			waitFor(t, "a new request from the next attempt", func() bool {
				if line := <-h.try("read", a); !strings.Contains(line, "permission denied") {
					t.Fatalf("the read after a once that let nothing through: %s", line)
				}
				_, ok := reachRequest(t, state, secret)
				return ok
			})
			mustRun(t, state, "grant", "nosy", secret)
			waitFor(t, "the read after the folder was allowed", func() bool {
				return strings.Contains(<-h.try("read", a), "secret a")
			})
		})
	}
}

// TestReachAsksThePersonWhenTheAppRuns: with the app running with its
// window (under Xvfb, no tray host), a bridged confined server's read waits
// for the person; `grant nosy FILE --once` typed in a terminal lets exactly
// that read through, from the same server process, and grants nothing; a
// truncate that joined the request meanwhile is refused and the file keeps
// its content.
func TestReachAsksThePersonWhenTheAppRuns(t *testing.T) {
	state, secret := reachSetup(t)
	startGUIApp(t, state)
	waitFor(t, "the app", func() bool { return liveStatus(t, state).Running })

	h := startHostSession(t, state)
	a, b := filepath.Join(secret, "a.txt"), filepath.Join(secret, "b.txt")
	read := h.try("read", a)
	waitFor(t, "the read waiting on its request", func() bool {
		r, ok := reachRequest(t, state, secret)
		return ok && len(r.Calls) == 1 && !r.Unasked
	})
	trunc := h.try("truncate", b)
	waitFor(t, "the truncate joining it", func() bool {
		r, _ := reachRequest(t, state, secret)
		return len(r.Calls) == 2
	})
	pid := 0
	for _, s := range liveStatus(t, state).Bridges {
		if s.Server == "nosy" {
			pid = s.PID
		}
	}
	out := mustRun(t, state, "grant", "nosy", a, "--once")
	if !strings.Contains(out, "read "+a) || strings.Contains(out, "rewrite") {
		t.Errorf("grant --once of the read said:\n%s", out)
	}
	if line := <-read; !strings.Contains(line, "secret a") {
		t.Fatalf("the read allowed once: %s", line)
	}
	if line := <-trunc; !strings.Contains(line, "permission denied") {
		t.Errorf("the truncate that was not named: %s", line)
	}
	if got, _ := os.ReadFile(b); string(got) != "secret b" {
		t.Errorf("b.txt is %q", got)
	}
	st := liveStatus(t, state)
	for _, s := range st.Bridges {
		if s.Server == "nosy" && (pid == 0 || s.PID != pid) {
			t.Errorf("the server's pid went from %d to %d: restarted", pid, s.PID)
		}
	}
	for _, s := range st.Servers {
		if s.Name == "nosy" && (len(s.Visible) != 1 || len(s.Requests) != 0) {
			t.Errorf("after allow once nosy sees %v and has requests %v; want its one folder and none", s.Visible, s.Requests)
		}
	}
}

// startGUIApp runs the app with its window (`rootkeeper --hidden` under
// Xvfb and a private session bus, no tray host, so its window comes up) on
// state until the test ends, and waits for its control socket: an app
// that can ask the person.
func startGUIApp(t *testing.T, state string) {
	t.Helper()
	if testing.Short() {
		t.Skip("GUI test skipped with -short")
	}
	for _, tool := range []string{"xvfb-run", "dbus-run-session"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (run .ci/setup)", tool)
		}
	}
	gui := exec.Command("dbus-run-session", "--", "xvfb-run", "-a", "-s", "-screen 0 1024x768x24", binary, "--state-dir", state, "--hidden")
	gui.Env = serverEnv()
	apptest.OwnGroup(gui)
	gui.WaitDelay = 2 * time.Second
	var logs strings.Builder
	gui.Stderr = &logs
	if err := gui.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		apptest.KillGroup(gui)
		gui.Wait()
		if t.Failed() {
			t.Logf("app:\n%s", logs.String())
		}
	})
	waitFor(t, "the app", func() bool { return liveStatus(t, state).Running })
}
