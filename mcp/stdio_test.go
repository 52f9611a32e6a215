package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// rootServer builds testdata/rootserver once and returns the binary.
func rootServer(t testing.TB) string { return apptest.Program(t, "mcp/testdata/rootserver") }

// report is a line a rootserver sent.
type report struct {
	server, event string
	payload       json.RawMessage
	at            time.Time
}

func (r report) uris() []string {
	var u []string
	json.Unmarshal(r.payload, &u)
	return sorted(u)
}

// reports listens on a unix socket for rootserver reports; it returns the
// socket (for RK_REPORT) and a channel per server name, made on demand.
type reports struct {
	sock string
	mu   sync.Mutex
	chs  map[string]chan report
}

func listenReports(t testing.TB) *reports {
	t.Helper()
	dir, err := os.MkdirTemp("", "rk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := &reports{sock: filepath.Join(dir, "r.sock"), chs: map[string]chan report{}}
	ln, err := net.Listen("unix", r.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				sc.Buffer(make([]byte, 1<<16), 1<<22)
				for sc.Scan() {
					at := time.Now()
					parts := strings.SplitN(sc.Text(), " ", 3)
					if len(parts) != 3 {
						continue
					}
					r.ch(parts[0]) <- report{server: parts[0], event: parts[1], payload: json.RawMessage(parts[2]), at: at}
				}
			}()
		}
	}()
	return r
}

func (r *reports) ch(name string) chan report {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.chs[name]
	if c == nil {
		c = make(chan report, 1000)
		r.chs[name] = c
	}
	return c
}

// next waits for the server's next report of the event.
func (r *reports) next(t testing.TB, server, event string) report {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case rep := <-r.ch(server):
			if rep.event == event {
				return rep
			}
		case <-deadline:
			t.Fatalf("%s: no %q report within %v", server, event, wait)
		}
	}
}

// expectRoots waits until the server reports holding exactly want.
func (r *reports) expectRoots(t testing.TB, server string, want ...string) report {
	t.Helper()
	want = sorted(want)
	deadline := time.After(wait)
	var seen []string
	for {
		select {
		case rep := <-r.ch(server):
			if rep.event == "roots" && strings.Join(rep.uris(), " ") == strings.Join(want, " ") {
				return rep
			}
			seen = append(seen, rep.event+" "+string(rep.payload))
		case <-deadline:
			t.Fatalf("%s never reported roots %q; saw %q", server, want, seen)
		}
	}
}

func (e *testEnv) addRootServer(bin string, r *reports, name string, mode app.RootsMode, flags ...string) {
	e.t.Helper()
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{
			Name: name, Type: app.TransportStdio, Command: bin,
			// A server on 2026-07-28 cannot ask for roots by itself, so
			// these speak the last version before it.
			Args: append([]string{"-name", name, "-version", legacyVersion}, flags...),
			// One thread each, like the single-threaded Node servers people
			// run: fifty servers with a spinning Go scheduler apiece would
			// mostly measure two cores' worth of context switches.
			Env:       map[string]string{"RK_REPORT": r.sock, "GOMAXPROCS": "1"},
			RootsMode: mode,
		})
	})
}

func TestStdioRootsModeOff(t *testing.T) {
	bin := rootServer(t)
	r := listenReports(t)
	e := newEnv(t)
	a := mkRoot(t, "a")
	e.addRootServer(bin, r, "off", app.RootsOff)
	e.addRoots(a)
	e.grant("off", a)
	e.start(e.fastOptions())
	rep := r.next(t, "off", "rootserr")
	var got struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(rep.payload, &got); err != nil {
		t.Fatal(err)
	}
	if got.Code != -32601 || got.Message != "Roots not supported" {
		t.Errorf("server got %d %q, want -32601 %q", got.Code, got.Message, "Roots not supported")
	}
	var data map[string]any
	if json.Unmarshal(got.Data, &data) != nil || len(data) != 1 || data["reason"] != "Client does not have roots capability" {
		t.Errorf("data %s", got.Data)
	}
}

// TestDiscoverExitFallback: a server that exits on server/discover (go-sdk
// #1177) still connects, speaking initialize, and is not probed again.
func TestDiscoverExitFallback(t *testing.T) {
	bin := rootServer(t)
	r := listenReports(t)
	e := newEnv(t)
	a := mkRoot(t, "a")
	e.addRootServer(bin, r, "old", "", "-exit-on-discover")
	e.addRoots(a)
	e.grant("old", a)
	e.start(e.fastOptions())
	r.next(t, "old", "start") // probed: exited
	r.next(t, "old", "start") // initialize only
	r.expectRoots(t, "old", app.URIFromPath(a))
	st := e.waitConnected("old")
	if st.ProtocolVersion != legacyVersion {
		t.Errorf("protocol %q, want %q", st.ProtocolVersion, legacyVersion)
	}
	e.m.Restart("old")
	r.next(t, "old", "start") // initialize only, at once
	r.expectRoots(t, "old", app.URIFromPath(a))
	if n := strings.Count(e.m.Log("old"), "unexpected first message"); n != 1 {
		t.Errorf("server was probed %d times, want once; stderr:\n%s", n, e.m.Log("old"))
	}
}

// TestExitedServerIsRestarted: a server that exits is started again (with
// backoff), and the new process gets the roots.
func TestExitedServerIsRestarted(t *testing.T) {
	bin := rootServer(t)
	r := listenReports(t)
	e := newEnv(t)
	a := mkRoot(t, "a")
	e.addRootServer(bin, r, "flaky", "", "-exit-after", "300ms", "-stderr")
	e.addRoots(a)
	e.grant("flaky", a)
	e.start(e.fastOptions())
	pids := map[string]bool{}
	for range 3 {
		st := r.next(t, "flaky", "start")
		pids[string(st.payload)] = true
		r.expectRoots(t, "flaky", app.URIFromPath(a))
	}
	if len(pids) != 3 {
		t.Errorf("3 starts, %d distinct processes", len(pids))
	}
	apptest.Eventually(t, "restarts counted", func() (bool, string) {
		st := e.status("flaky")
		return st.Restarts >= 2, string(st.State)
	})
	if !strings.Contains(e.m.Log("flaky"), "flaky roots") {
		t.Errorf("stderr not captured: %q", e.m.Log("flaky"))
	}
	if data, err := os.ReadFile(filepath.Join(e.dir, "logs", "flaky.log")); err != nil || !strings.Contains(string(data), "flaky start") {
		t.Errorf("stderr log file: %v %q", err, data)
	}
}

func TestArgsAndEnvModes(t *testing.T) {
	bin := rootServer(t)
	r := listenReports(t)
	e := newEnv(t)
	a, b := mkRoot(t, "a b"), mkRoot(t, "c")
	e.addRootServer(bin, r, "args", app.RootsArgs, "--")
	e.addRootServer(bin, r, "env", app.RootsEnv)
	e.addRoots(a, b)
	e.grant("args", a)
	e.grant("env", a)
	e.start(e.fastOptions())

	type start struct {
		Args []string `json:"args"`
		Env  string   `json:"env"`
	}
	read := func(name string) start {
		var s start
		rep := r.next(t, name, "start")
		json.Unmarshal(rep.payload, &s)
		return s
	}
	if s := read("args"); strings.Join(s.Args, "|") != a {
		t.Errorf("args server started with %q, want [%s]", s.Args, a)
	}
	if s := read("env"); s.Env != app.EncodeRootsEnv([]string{a}) || len(s.Args) != 0 {
		t.Errorf("env server started with %+v, want ROOTKEEPER_ROOTS=[%q]", s, a)
	}
	// Neither declares roots: asked anyway, they are refused.
	r.next(t, "args", "rootserr")
	r.next(t, "env", "rootserr")

	e.grant("args", b)
	e.grant("env", b)
	if s := read("args"); strings.Join(s.Args, "|") != a+"|"+b {
		t.Errorf("args server restarted with %q, want [%s %s]", s.Args, a, b)
	}
	var got []string
	if s := read("env"); json.Unmarshal([]byte(s.Env), &got) != nil || !slices.Equal(got, []string{a, b}) {
		t.Errorf("env server restarted with %q, want a JSON array of %q and %q", s.Env, a, b)
	}
	// Statuses are published in batches: the restart's reaches it soon.
	apptest.Eventually(t, "the args server's status names the two roots it was sent", func() (bool, string) {
		st := e.status("args")
		return len(st.LastSent) == 2, fmt.Sprint(st.LastSent)
	})
}

// A root that becomes visible while a server is still in its handshake
// (at start the health check usually lands there) reaches it the ordinary
// way: it asks once initialized. Nothing but pings may precede the end of
// the handshake, so no list_changed goes to a session still connecting.
func TestNoListChangedDuringTheHandshake(t *testing.T) {
	bin := rootServer(t)
	r := listenReports(t)
	e := newEnv(t)
	a := mkRoot(t, "a")
	e.addRootServer(bin, r, "slow", "", "-slow-handshake", "700ms")
	e.update(func(s *app.State) error {
		if err := s.AddRoot(app.Root{Path: a, Enabled: true}); err != nil {
			return err
		}
		return s.Decide(app.Decision{Server: "slow", Root: a, Verdict: app.Allow, By: app.ByCommandLine})
	})
	e.start(e.fastOptions())
	r.next(t, "slow", "start") // the process runs: our client is in the handshake
	e.core.SetHealth(a, app.CheckAccess(a, 0))

	ua := app.URIFromPath(a)
	deadline := time.After(wait)
	for {
		select {
		case rep := <-r.ch("slow"):
			switch rep.event {
			case "early":
				t.Fatalf("list_changed sent before the handshake ended: %s", rep.payload)
			case "roots":
				if got := rep.uris(); slices.Equal(got, []string{ua}) {
					return
				}
			}
		case <-deadline:
			t.Fatalf("the server never got %s", ua)
		}
	}
}
