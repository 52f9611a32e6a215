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
	base := apptest.RealTempDir(t)
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
	return startHostSessionIn(t, serverEnv(), state)
}

// startHostSessionIn is startHostSession with the environment env.
func startHostSessionIn(t *testing.T, env []string, state string) *hostSession {
	t.Helper()
	br := exec.Command(binary, "--state-dir", state, "bridge", "nosy")
	br.Env = env
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
			// The once took the request away. The app may show it a
			// little longer (it reads the state the command saved when
			// its watch says so), and until it stops showing it, the
			// old request would pass for the new one below.
			waitFor(t, "the old request gone", func() bool {
				_, ok := reachRequest(t, state, secret)
				return !ok
			})
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

// reachRound is one round of the attack on allow once: a read of a file
// waits, `status` is read, and a truncate of the same file joins it.
type reachRound struct {
	read, trunc         <-chan string // the calls' answers to come
	readID, truncID     string        // their short ids
	statusBeforeTheJoin string
}

// startReachRound has nosy (through h) read file, in folder secret, wait
// for the person, reads `status`, and has a truncate of file join it.
func startReachRound(t *testing.T, h *hostSession, state, secret, file string) reachRound {
	t.Helper()
	var r reachRound
	r.read = h.try("read", file)
	waitFor(t, "the read waiting on its request", func() bool {
		req, ok := reachRequest(t, state, secret)
		return ok && len(req.Calls) == 1 && !req.Unasked
	})
	r.statusBeforeTheJoin = mustRun(t, state, "status")
	r.trunc = h.try("truncate", file)
	waitFor(t, "the truncate joining it", func() bool {
		req, _ := reachRequest(t, state, secret)
		for _, c := range req.Calls {
			switch c.Op {
			case app.OpRead:
				r.readID = c.Short
			case app.OpTruncate:
				r.truncID = c.Short
			}
		}
		return len(req.Calls) == 2 && r.readID != "" && r.truncID != ""
	})
	return r
}

// bridgePID is the pid of the server of nosy's bridge session, 0 when
// there is none.
func bridgePID(t *testing.T, state string) int {
	t.Helper()
	for _, s := range liveStatus(t, state).Bridges {
		if s.Server == "nosy" {
			return s.PID
		}
	}
	return 0
}

// TestReachAsksThePersonWhenTheAppRuns is the attack on allow once
// typed in a terminal, with the app running with its window (under Xvfb,
// no tray host) so that a bridged confined server's calls wait for the
// person. A read of a.txt waits, and `status` is read; a truncating write
// of a.txt joins; `grant nosy a.txt --once` lets only the read through:
// the write is refused and a.txt keeps its content. The folder's once lets
// no change through either. Only `grant nosy --once --call ID`, naming the
// write by the short id status shows, lets exactly it through (an id that
// names no waiting call exits 2 and lets nothing through). All from the
// same server process, and nothing is granted.
func TestReachAsksThePersonWhenTheAppRuns(t *testing.T) {
	state, secret := reachSetup(t)
	startGUIApp(t, state)
	h := startHostSession(t, state)
	a := filepath.Join(secret, "a.txt")

	r := startReachRound(t, h, state, secret, a)
	first := bridgePID(t, state)
	if want := "[" + r.readID + "] read " + a + " (once: `rootkeeper grant nosy --once --call " + r.readID + "`)"; !strings.Contains(r.statusBeforeTheJoin, want) {
		t.Errorf("status does not offer %q:\n%s", want, r.statusBeforeTheJoin)
	}
	out := mustRun(t, state, "grant", "nosy", a, "--once")
	if !strings.Contains(out, "  ["+r.readID+"] read "+a+"\n") || !strings.Contains(out, "refused: ["+r.truncID+"] empty and rewrite "+a) {
		t.Errorf("grant --once of a.txt said:\n%s", out)
	}
	if line := <-r.read; !strings.Contains(line, "secret a") {
		t.Fatalf("the read allowed once: %s", line)
	}
	if line := <-r.trunc; !strings.Contains(line, "permission denied") {
		t.Errorf("the truncate that joined the read went through on the once given for a.txt: %s", line)
	}
	if got, _ := os.ReadFile(a); string(got) != "secret a" {
		t.Fatalf("a.txt is %q after a once given for a.txt's read", got)
	}

	r = startReachRound(t, h, state, secret, a)
	out = mustRun(t, state, "grant", "nosy", secret, "--once")
	if !strings.Contains(out, "  ["+r.readID+"] read "+a+"\n") || !strings.Contains(out, "refused: ["+r.truncID+"] empty and rewrite "+a) {
		t.Errorf("grant --once of the folder said:\n%s", out)
	}
	<-r.read
	if line := <-r.trunc; !strings.Contains(line, "permission denied") {
		t.Errorf("the truncate went through on the folder's once: %s", line)
	}
	if got, _ := os.ReadFile(a); string(got) != "secret a" {
		t.Fatalf("a.txt is %q after the folder's once", got)
	}

	r = startReachRound(t, h, state, secret, a)
	if _, errOut, code := rootkeeper(t, state, "grant", "nosy", "--once", "--call", "nosuch"); code != 2 || !strings.Contains(errOut, `"nosuch" names no call of nosy waiting now`) {
		t.Errorf("an id naming no call: exit %d, %q", code, errOut)
	}
	if req, _ := reachRequest(t, state, secret); len(req.Calls) != 2 {
		t.Errorf("after a refused --call the calls waiting are %+v; want both still waiting", req.Calls)
	}
	out = mustRun(t, state, "grant", "nosy", "--once", "--call", r.truncID)
	if !strings.Contains(out, "  ["+r.truncID+"] empty and rewrite "+a+"\n") || !strings.Contains(out, "refused: ["+r.readID+"] read "+a+" (not named)") {
		t.Errorf("grant --once --call of the truncate said:\n%s", out)
	}
	if line := <-r.trunc; !strings.Contains(line, `\"ok\":true`) {
		t.Errorf("the truncate named by its id: %s", line)
	}
	if line := <-r.read; !strings.Contains(line, "permission denied") {
		t.Errorf("the read not named: %s", line)
	}
	if got, _ := os.ReadFile(a); string(got) != "T" {
		t.Errorf("a.txt is %q after the truncate was let through by its id; want nosy's \"T\"", got)
	}

	if now := bridgePID(t, state); first == 0 || now != first {
		t.Errorf("the server's pid went from %d to %d: restarted", first, now)
	}
	for _, s := range liveStatus(t, state).Servers {
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
	for _, tool := range []string{"Xvfb", "dbus-run-session"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (run .ci/setup)", tool)
		}
	}
	gui := exec.Command("dbus-run-session", "--", binary, "--state-dir", state, "--hidden")
	gui.Env = apptest.WithDisplay(serverEnv(), apptest.XServer(t, "1024x768"))
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
