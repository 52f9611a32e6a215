package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/audit"
	"rootkeeper/mcp/confine"

	"github.com/fsnotify/fsnotify"
)

// wait bounds each exchange; generous, since a 17 MiB message under -race on
// a loaded machine takes seconds.
const wait = 30 * time.Second

// host is the test's MCP host: it writes to the bridge's stdin, reads its
// stdout, matches responses to requests, and answers the bridge's roots/list
// with rootsAnswer (or never, when it is nil).
type host struct {
	t      testing.TB
	in     io.Writer
	mu     sync.Mutex
	waits  map[string]chan json.RawMessage
	asked  int // roots/list requests from the bridge
	seen   []json.RawMessage
	answer func(id json.RawMessage) any // the host's roots/list answer; nil: never answers
	nextID int
}

type fixture struct {
	t     testing.TB
	core  *app.Core
	dir   string
	a, b  string
	h     *host
	done  chan error
	audit *audit.Log
	// sessions receives what the bridge shows of itself (benchmarks).
	sessions chan Session
}

func setHealthy(core *app.Core, paths ...string) {
	for _, p := range paths {
		core.SetHealth(p, app.Health{Status: app.HealthOK})
	}
}

// start runs a bridge to the input server, configured by srv, with roots a
// (granted) and b (not).
func start(t *testing.T, srv app.Server, hostAnswer func(json.RawMessage) any, tune ...func(*Options)) *fixture {
	t.Helper()
	srv.Command = apptest.Program(t, "mcp/bridge/testdata/inputserver")
	return startWith(t, srv, hostAnswer, tune...)
}

// startWith is start with the server's command given; tune, if any,
// adjusts the bridge's options.
func startWith(t *testing.T, srv app.Server, hostAnswer func(json.RawMessage) any, tune ...func(*Options)) *fixture {
	t.Helper()
	return startPrepared(t, srv, nil, hostAnswer, tune...)
}

// startPrepared is startWith with prepare, if any, run on the state after
// the fixture's own setup and before the bridge starts.
func startPrepared(t *testing.T, srv app.Server, prepare func(*app.State) error, hostAnswer func(json.RawMessage) any, tune ...func(*Options)) *fixture {
	t.Helper()
	core, dir := apptest.NewCore(t)
	srv.Name = "fs"
	if srv.Type == "" {
		srv.Type = app.TransportStdio
	}
	a, b := mkdir(t, "a"), mkdir(t, "b c#d")
	if err := core.Update(func(s *app.State) error {
		if err := s.AddServer(srv); err != nil {
			return err
		}
		for _, p := range []string{a, b} {
			if err := s.AddRoot(app.Root{Path: p, Enabled: true, Source: app.SourcePicked}); err != nil {
				return err
			}
		}
		if err := s.Decide(app.Decision{Server: "fs", Root: a, Verdict: app.Allow, By: app.ByCommandLine}); err != nil {
			return err
		}
		if prepare != nil {
			return prepare(s)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	setHealthy(core, a, b)
	f := &fixture{t: t, core: core, dir: dir, a: a, b: b, done: make(chan error, 1), audit: audit.NewLog(dir)}
	hostIn, bridgeIn := io.Pipe()
	bridgeOut, hostOut := io.Pipe()
	f.h = &host{t: t, in: bridgeIn, waits: map[string]chan json.RawMessage{}, answer: hostAnswer}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		o := Options{Core: core, Server: "fs", HostIn: hostIn, HostOut: hostOut, Stderr: io.Discard, Audit: f.audit, StateDir: dir,
			StopGrace: 500 * time.Millisecond, KillAfter: 500 * time.Millisecond}
		for _, f := range tune {
			f(&o)
		}
		f.done <- Run(ctx, o)
		hostOut.Close()
	}()
	go f.h.read(bridgeOut)
	t.Cleanup(func() {
		bridgeIn.Close()
		select {
		case <-f.done:
		case <-time.After(wait):
			t.Error("the bridge did not end after the host closed its side")
		}
		cancel()
		f.audit.Close()
	})
	return f
}

func mkdir(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	canon, _ := filepath.EvalSymlinks(p)
	return canon
}

func (h *host) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		var msgs []json.RawMessage
		if line[0] == '[' {
			json.Unmarshal(line, &msgs)
		} else {
			msgs = []json.RawMessage{line}
		}
		for _, m := range msgs {
			h.mu.Lock()
			h.seen = append(h.seen, m)
			h.mu.Unlock()
			// Read as a JavaScript host reads it: exact keys, the last of
			// a key spelled twice, escapes decoded.
			var obj map[string]json.RawMessage
			json.Unmarshal(m, &obj)
			hd := header{ID: obj["id"]}
			json.Unmarshal(obj["method"], &hd.Method)
			switch {
			case hd.Method == "roots/list":
				h.mu.Lock()
				h.asked++
				answer := h.answer
				h.mu.Unlock()
				if answer != nil {
					h.send(map[string]any{"jsonrpc": "2.0", "id": hd.ID, "result": answer(hd.ID)})
				}
			case hd.isResponse():
				h.mu.Lock()
				ch := h.waits[string(hd.ID)]
				delete(h.waits, string(hd.ID))
				h.mu.Unlock()
				if ch != nil {
					ch <- m
				}
			}
		}
	}
}

func (h *host) send(v any) {
	data, _ := json.Marshal(v)
	h.in.Write(append(data, '\n'))
}

// call sends a request and returns the whole response.
func (h *host) call(method string, params any) json.RawMessage {
	h.t.Helper()
	h.mu.Lock()
	h.nextID++
	n := h.nextID
	ch := make(chan json.RawMessage, 1)
	h.waits[fmt.Sprint(n)] = ch
	h.mu.Unlock()
	h.send(map[string]any{"jsonrpc": "2.0", "id": n, "method": method, "params": params})
	select {
	case m := <-ch:
		return m
	case <-time.After(wait):
		h.t.Fatalf("no answer to %s", method)
	}
	return nil
}

// tool calls a tool of the input server and returns its text.
func (h *host) tool(name string, args map[string]any, meta map[string]any) string {
	h.t.Helper()
	params := map[string]any{"name": name, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	var res struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	json.Unmarshal(h.call("tools/call", params), &res)
	if len(res.Error) > 0 {
		h.t.Fatalf("%s: error %s", name, res.Error)
	}
	if len(res.Result.Content) == 0 {
		return ""
	}
	return res.Result.Content[0].Text
}

// eventually asks the tool until it says want.
func (h *host) eventually(name, want string) {
	h.t.Helper()
	apptest.Eventually(h.t, fmt.Sprintf("%s to say %q", name, want), func() (bool, string) {
		got := h.tool(name, nil, nil)
		return got == want, got
	})
}

func uri(p string) string { return app.URIFromPath(p) }

var legacyVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

// On every revision with initialize, the server's roots are Rootkeeper's:
// it sees the granted folder, follows a grant, and sees the capability
// Rootkeeper declares, not the host's; the host's folder becomes a request
// and its list_changed never reaches the server.
func TestServerRootsComeFromRootkeeper(t *testing.T) {
	for _, version := range legacyVersions {
		t.Run(version, func(t *testing.T) {
			hostDir := mkdir(t, "host work")
			f := start(t, app.Server{}, func(json.RawMessage) any {
				return map[string]any{"roots": []any{map[string]any{"uri": uri(hostDir), "name": "work"}}}
			})
			h := f.h
			h.call("initialize", map[string]any{"protocolVersion": version, "clientInfo": map[string]any{"name": "claude-code", "version": "2.1"},
				"capabilities": map[string]any{"roots": map[string]any{"listChanged": false}, "elicitation": map[string]any{}}})
			h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
			h.eventually("roots-asked", uri(f.a))
			if caps := h.tool("capabilities", nil, nil); !strings.Contains(caps, `"roots":{"listChanged":true}`) || !strings.Contains(caps, `"elicitation"`) {
				t.Errorf("the server saw capabilities %s", caps)
			}
			// The host's folder is a request, not a root anyone sees.
			apptest.Until(t, f.core, "the host's folder to become a request", func(s *app.Snapshot) bool {
				_, ok := s.State.Request("fs", hostDir)
				return ok
			})
			if r, _ := f.core.Snapshot().State.Request("fs", hostDir); r.From != "claude-code 2.1" {
				t.Errorf("request from %q", r.From)
			}
			// A grant reaches the server through list_changed.
			f.core.Update(func(s *app.State) error { return s.Decide(app.Decision{Server: "fs", Root: f.b, Verdict: app.Allow}) })
			want := []string{uri(f.a), uri(f.b)}
			slices.Sort(want)
			h.eventually("roots-asked", strings.Join(want, " "))
			// The host's list_changed is swallowed (the host is asked again).
			before := h.tool("changes", nil, nil)
			h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
			h.call("ping", map[string]any{})
			if after := h.tool("changes", nil, nil); after != before {
				t.Errorf("the host's list_changed reached the server (%s -> %s)", before, after)
			}
			// Pause: nothing.
			f.core.Update(func(s *app.State) error { s.Paused = true; return nil })
			h.eventually("roots-asked", "")
			entries, _ := audit.Read(f.dir, "fs")
			if len(entries) == 0 || entries[0].ProtocolVersion != version {
				t.Errorf("audit entries %+v", entries)
			}
		})
	}
}

// rootsMode off: no roots capability towards the server, and its
// roots/list gets the exact -32601 answer.
func TestRootsOffRefusesExactly(t *testing.T) {
	f := start(t, app.Server{RootsMode: app.RootsOff}, nil)
	h := f.h
	h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"roots": map[string]any{}}})
	h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	want := `error {"code":-32601,"message":"Roots not supported","data":{"reason":"Client does not have roots capability"}}`
	h.eventually("roots-asked", want)
	if caps := h.tool("capabilities", nil, nil); strings.Contains(caps, "roots") {
		t.Errorf("capabilities %s declare roots", caps)
	}
}

// 2026-07-28: capabilities ride in each request's _meta, and roots travel
// as input requests. The bridge fulfils them: alone, the host sees only the
// final result; mixed with an elicitation, the host answers the elicitation
// and never sees the roots request.
func TestInputRequestsAreFulfilledByTheBridge(t *testing.T) {
	f := start(t, app.Server{}, nil)
	h := f.h
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"roots": map[string]any{}, "elicitation": map[string]any{}},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "code", "version": "9"}}
	if got := h.tool("roots", nil, meta); got != uri(f.a) {
		t.Fatalf("roots through an input request: %q, want %q", got, uri(f.a))
	}
	if caps := h.tool("capabilities", nil, meta); !strings.Contains(caps, `"roots":{"listChanged":true}`) {
		t.Errorf("the server saw _meta capabilities %s", caps)
	}
	// Mixed: the host gets the elicitation only.
	first := h.call("tools/call", map[string]any{"name": "mixed", "arguments": map[string]any{}, "_meta": meta})
	var res struct {
		Result struct {
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		} `json:"result"`
	}
	json.Unmarshal(first, &res)
	if _, ok := res.Result.InputRequests["e"]; !ok || len(res.Result.InputRequests) != 1 {
		t.Fatalf("the host was shown input requests %v, want only the elicitation", res.Result.InputRequests)
	}
	final := h.call("tools/call", map[string]any{"name": "mixed", "arguments": map[string]any{}, "_meta": meta,
		"inputResponses": map[string]any{"e": map[string]any{"action": "accept", "content": map[string]any{}}},
		"requestState":   res.Result.RequestState})
	if !strings.Contains(string(final), "roots="+uri(f.a)+" elicit=accept") {
		t.Fatalf("final result %s", final)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.seen {
		if strings.Contains(string(m), `"roots/list"`) && !strings.Contains(string(m), ownIDPrefix) {
			t.Fatalf("the host saw a roots request: %s", m)
		}
	}
}

// Everything else passes untouched: ids of every kind, batches, and a
// message of 15 MiB (the limit is 16).
func TestPassThroughFidelity(t *testing.T) {
	f := start(t, app.Server{}, nil)
	h := f.h
	h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}})
	h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	big := strings.Repeat("0123456789abcdef", 15<<20/16) // 15 MiB
	if got := h.tool("echo", map[string]any{"text": big}, nil); got != big {
		t.Fatalf("a 15 MiB message came back %d bytes long", len(got))
	}
	ch := make(chan json.RawMessage, 2)
	h.mu.Lock()
	h.waits[`"str-id"`] = ch
	h.waits[`7`] = ch
	h.mu.Unlock()
	h.in.Write([]byte(`[{"jsonrpc":"2.0","id":"str-id","method":"ping"},{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"é\u2028"}}}]` + "\n"))
	for range 2 {
		select {
		case m := <-ch:
			if !strings.Contains(string(m), `"id":"str-id"`) && !strings.Contains(string(m), `"id":7`) {
				t.Errorf("a batch answer lost its id: %s", m)
			}
		case <-time.After(wait):
			t.Fatal("a batched request was not answered")
		}
	}
}

// A hostile host: its roots answer holds non-file URIs, relative paths,
// "..", folders that do not exist and ten thousand entries; or it never
// answers. Nothing bad is recorded, and the bridge keeps serving.
func TestHostileHostRoots(t *testing.T) {
	good, later := mkdir(t, "good"), mkdir(t, "later")
	var withLater atomic.Bool // the host's answer names later too
	f := start(t, app.Server{}, func(json.RawMessage) any {
		roots := []any{
			map[string]any{"uri": "https://evil.example/x"},
			map[string]any{"uri": "file://relative/x"},
			map[string]any{"uri": "file:///tmp/../etc"},
			map[string]any{"uri": "file:///no/such/folder"},
			map[string]any{"uri": uri(good)},
		}
		if withLater.Load() {
			roots = append(roots, map[string]any{"uri": uri(later)})
		}
		for i := range 10_000 {
			roots = append(roots, map[string]any{"uri": fmt.Sprintf("file:///no/such/%d", i)})
		}
		return map[string]any{"roots": roots}
	})
	h := f.h
	h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"roots": map[string]any{"listChanged": true}}})
	h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	h.eventually("roots-asked", uri(f.a))
	reqs := apptest.Until(t, f.core, "a request from the host's answer", func(s *app.Snapshot) bool { return len(s.State.Requests) > 0 }).State.Requests
	if len(reqs) != 1 || reqs[0].Path != good {
		t.Fatalf("requests recorded from a hostile answer: %+v", reqs)
	}
	// The same answer again and again does not rewrite the state file:
	// each write replaces it (a rename onto it), which its folder's watch
	// sees, in order.
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(f.dir); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	asked := h.asked
	h.mu.Unlock()
	for range 5 {
		h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
		h.call("ping", map[string]any{})
	}
	apptest.Eventually(t, "the host asked 5 more times", func() (bool, string) {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.asked >= asked+5, fmt.Sprint(h.asked - asked)
	})
	// Then an answer that is new: its request is written, after (the
	// answers are handled in order) whatever the same answers wrote.
	withLater.Store(true)
	h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
	apptest.Until(t, f.core, "the new answer's request", func(s *app.Snapshot) bool {
		_, ok := s.State.Request("fs", later)
		return ok
	})
	// The state is published before it is written: wait for the write of
	// the new request (the file holds it), then for a file of the test's
	// own, made after that, whose event comes after every write's.
	sentinel := filepath.Join(f.dir, "test-sentinel")
	writes, made := 0, false
	hung := time.After(apptest.Patience)
	for seen := false; !seen; {
		select {
		case ev := <-w.Events:
			switch {
			case ev.Name == sentinel:
				seen = true
			case filepath.Base(ev.Name) == app.StateFileName && ev.Has(fsnotify.Create):
				writes++
			}
		case err := <-w.Errors:
			t.Fatal(err)
		case <-hung:
			t.Fatal("the new request was never written (hung?)")
		}
		if data, _ := os.ReadFile(filepath.Join(f.dir, app.StateFileName)); !made && bytes.Contains(data, []byte(later)) {
			made = true
			if err := os.WriteFile(sentinel, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if writes != 1 {
		t.Errorf("the state file was written %d times for five answers the same and one new", writes)
	}

	// A host that never answers: the bridge serves on, and does not pile up
	// questions.
	silent := start(t, app.Server{}, nil)
	silent.h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"roots": map[string]any{"listChanged": true}}})
	silent.h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	for range 50 {
		silent.h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
	}
	silent.h.eventually("roots-asked", uri(silent.a))
	silent.h.mu.Lock()
	asked = silent.h.asked
	silent.h.mu.Unlock()
	if asked > 9 {
		t.Fatalf("a silent host was asked %d times", asked)
	}
}

// A server that cannot start: the host's initialize gets an error that
// names the command.
func TestServerThatCannotStart(t *testing.T) {
	core, _ := apptest.NewCore(t)
	core.Update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: "/no/such/server-binary"})
	})
	hostIn, bridgeIn := io.Pipe()
	bridgeOut, hostOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{Core: core, Server: "fs", HostIn: hostIn, HostOut: hostOut, Stderr: io.Discard})
		hostOut.Close()
	}()
	bridgeIn.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}` + "\n"))
	line, err := bufio.NewReader(bridgeOut).ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":1`) || !strings.Contains(line, "/no/such/server-binary") || !strings.Contains(line, `"error"`) {
		t.Fatalf("answer %q, %v", line, err)
	}
	bridgeIn.Close()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "/no/such/server-binary") {
		t.Fatalf("Run returned %v", err)
	}
}

// Host-roots mode follow: a session sees its allowed set narrowed to where
// the host works (allowed a, host in a/sub: a/sub); a host folder nothing
// allowed covers is a request.
func TestFollowModeNarrowsToTheHost(t *testing.T) {
	var f *fixture
	var sub, elsewhere string
	f = start(t, app.Server{HostRoots: app.HostRootsFollow}, func(json.RawMessage) any {
		return map[string]any{"roots": []any{map[string]any{"uri": uri(sub)}, map[string]any{"uri": uri(elsewhere)}}}
	})
	sub = filepath.Join(f.a, "sub")
	os.Mkdir(sub, 0o755)
	elsewhere = mkdir(t, "elsewhere")
	h := f.h
	h.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"roots": map[string]any{"listChanged": true}}})
	h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	h.eventually("roots-asked", uri(sub))
	apptest.Until(t, f.core, "the uncovered host folder to become a request", func(s *app.Snapshot) bool {
		_, ok := s.State.Request("fs", elsewhere)
		return ok
	})
	if _, ok := f.core.Snapshot().State.Request("fs", sub); ok {
		t.Error("a host folder inside an allowed one became a request")
	}
}

// startInfo is what the input server's "started" tool says.
type startInfo struct {
	PID   int      `json:"pid"`
	Args  []string `json:"args"`
	Env   string   `json:"env"`
	Inits int      `json:"inits"`
}

// started asks the server's "started" tool until check accepts it, and
// returns it.
func (h *host) started(check func(startInfo) bool) startInfo {
	h.t.Helper()
	var s startInfo
	apptest.Eventually(h.t, "the server's start", func() (bool, string) {
		got := h.toolOrError("started", nil)
		s = startInfo{}
		return json.Unmarshal([]byte(got), &s) == nil && check(s), got
	})
	return s
}

// toolOrError is tool, with an error answer (a request cut short by a
// restart) returned as its text.
func (h *host) toolOrError(name string, args map[string]any) string {
	h.t.Helper()
	var res struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	json.Unmarshal(h.call("tools/call", map[string]any{"name": name, "arguments": args}), &res)
	if res.Error != nil {
		return "error: " + res.Error.Message
	}
	if len(res.Result.Content) == 0 {
		return ""
	}
	return res.Result.Content[0].Text
}

// A server that holds its roots from its start (roots mode args or env) is
// started again when they change: the host keeps its session (its
// initialize is replayed, the replay's answer kept from it), a request the
// old process had not answered gets an error saying to send it again, the
// old process is gone, and each start is audited.
func TestArgsAndEnvServersStartAgainOnChange(t *testing.T) {
	for _, mode := range []app.RootsMode{app.RootsArgs, app.RootsEnv} {
		t.Run(string(mode), func(t *testing.T) {
			// In mode args the server lingers after its stdin closes, and the
			// grace of an ordinary stop is long: a server that lost a folder
			// must be killed at once instead.
			srv, grace := app.Server{RootsMode: mode}, 500*time.Millisecond
			signals := filepath.Join(t.TempDir(), "signals")
			if mode == app.RootsArgs {
				srv.Env, grace = map[string]string{"INPUTSERVER_LINGER": signals}, 4*time.Second
			}
			f := start(t, srv, nil, func(o *Options) { o.StopGrace = grace })
			h := f.h
			h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"roots": map[string]any{}}})
			h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
			holds := func(s startInfo, path string) bool {
				if mode == app.RootsArgs {
					return slices.Contains(s.Args, path)
				}
				var env []string
				json.Unmarshal([]byte(s.Env), &env)
				return slices.Contains(env, path)
			}
			first := h.started(func(s startInfo) bool { return holds(s, f.a) && !holds(s, f.b) })

			// A slow request is in flight when the grant comes.
			slow := make(chan string, 1)
			go func() { slow <- h.toolOrError("slow", map[string]any{"ms": 3000}) }()
			apptest.Eventually(t, "the slow request to reach the server", func() (bool, string) {
				h.mu.Lock()
				defer h.mu.Unlock()
				return slices.ContainsFunc(h.seen, func(m json.RawMessage) bool { return bytes.Contains(m, []byte("slow began")) }), ""
			})
			f.core.Update(func(s *app.State) error { return s.Decide(app.Decision{Server: "fs", Root: f.b, Verdict: app.Allow}) })
			select {
			case got := <-slow:
				if !strings.Contains(got, "error") || !strings.Contains(got, "send the request again") {
					t.Errorf("the request in flight got %q", got)
				}
			case <-time.After(wait):
				t.Fatal("the request in flight was never answered")
			}
			second := h.started(func(s startInfo) bool { return holds(s, f.a) && holds(s, f.b) })
			if second.PID == first.PID || second.Inits != 1 {
				t.Errorf("after the grant: %+v (before: %+v)", second, first)
			}
			// A revoke takes the folder away the same way, and the process
			// that held it is killed at once, not given the grace of an
			// ordinary stop.
			f.core.Update(func(s *app.State) error { s.Revoke("fs", f.a); return nil })
			h.started(func(s startInfo) bool { return !holds(s, f.a) && holds(s, f.b) })
			for _, pid := range []int{second.PID, first.PID} {
				apptest.Eventually(t, fmt.Sprintf("server process %d to end", pid), func() (bool, string) { return !processAlive(pid), "" })
			}
			if mode == app.RootsArgs {
				// The first was stopped the ordinary way (stdin closed,
				// SIGTERM after the grace, which it ignores, then SIGKILL);
				// the one that lost a folder by SIGKILL alone.
				notes, _ := os.ReadFile(signals)
				if !strings.Contains(string(notes), fmt.Sprintf("%d SIGTERM\n", first.PID)) {
					t.Errorf("the first server was not stopped the ordinary way: signals noted %q", notes)
				}
				if strings.Contains(string(notes), fmt.Sprintf("%d SIGTERM\n", second.PID)) {
					t.Errorf("the server that lost a folder got SIGTERM, not SIGKILL at once: signals noted %q", notes)
				}
			}
			h.mu.Lock()
			for _, m := range h.seen {
				if strings.Contains(string(m), ownIDPrefix+"init") || strings.Count(string(m), `"protocolVersion"`) > 0 && strings.Count(string(m), `"serverInfo"`) > 0 && !strings.Contains(string(m), `"id":1,`) {
					t.Errorf("the host saw the replayed initialize: %s", m)
				}
			}
			h.mu.Unlock()
			entries, _ := audit.Read(f.dir, "fs")
			if len(entries) < 3 || entries[0].Via != string(mode) {
				t.Errorf("audit entries %+v", entries)
			}
		})
	}
}

// Through the bridge, a confined server that ignores its roots cannot list
// a folder it was not granted; after the grant it can, from the same
// process (its observer hands it the folder: no restart), and the host's
// session goes on; a revoke (a ruleset cannot be narrowed) starts it
// again, replaying the host's initialize, without the folder.
func TestConfinedServerStartsAgainOnChange(t *testing.T) {
	if _, err := confine.ABI(); err != nil {
		t.Fatalf("Landlock: %v", err)
	}
	nosy := apptest.Program(t, "mcp/confine/testdata/nosy")
	f := startWith(t, app.Server{Confine: true, Command: nosy}, nil)
	h := f.h
	h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	try := func(op, path string) (ok bool, text string) {
		text = h.toolOrError("try", map[string]any{"op": op, "path": path})
		var r struct{ OK bool }
		json.Unmarshal([]byte(text), &r)
		return r.OK, text
	}
	if ok, text := try("list", f.a); !ok {
		t.Fatalf("the confined server cannot list its granted root: %s", text)
	}
	if ok, text := try("list", f.b); ok || !strings.Contains(text, "permission denied") {
		t.Fatalf("the confined server listed a folder it was not granted: %s", text)
	}
	pid := func() string {
		var r struct{ Got string }
		json.Unmarshal([]byte(h.toolOrError("try", map[string]any{"op": "pid", "path": ""})), &r)
		return r.Got
	}
	before := pid()
	f.core.Update(func(s *app.State) error { return s.Decide(app.Decision{Server: "fs", Root: f.b, Verdict: app.Allow}) })
	apptest.Eventually(t, "the server to list the folder granted", func() (bool, string) { return try("list", f.b) })
	if now := pid(); now != before || before == "" {
		t.Errorf("the grant started the server again: pid %s, then %s", before, now)
	}
	f.core.Update(func(s *app.State) error { s.Revoke("fs", f.a); return nil })
	apptest.Eventually(t, "the server to lose the folder revoked", func() (bool, string) {
		ok, text := try("list", f.a)
		return !ok && strings.Contains(text, "permission denied"), text
	})
	if now := pid(); now == before {
		t.Errorf("the revoke did not start the server again (pid %s)", now)
	}
}

// A server changed in Rootkeeper while a host uses it (another command,
// other arguments, another roots mode) or removed: the session ends rather
// than keep running what is no longer configured; the host starts it
// again. A change of its sampling mode does not end it.
func TestChangedServerEndsTheSession(t *testing.T) {
	for name, change := range map[string]func(*app.State) error{
		"args": func(s *app.State) error {
			srv, _ := s.Server("fs")
			srv.Args = []string{"--other"}
			_, err := s.PutServer(srv, app.PutOptions{Replace: true, KeepDecisions: true})
			return err
		},
		"removed": func(s *app.State) error { return s.RemoveServer("fs") },
	} {
		t.Run(name, func(t *testing.T) {
			// Stored as the app stores a server (PutServer), so that
			// only what the test changes changes.
			inputserver := app.Server{Command: apptest.Program(t, "mcp/bridge/testdata/inputserver")}
			f := startPrepared(t, inputserver, func(s *app.State) error {
				srv, _ := s.Server("fs")
				_, err := s.PutServer(srv, app.PutOptions{Replace: true})
				return err
			}, nil)
			f.h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}})
			f.core.Update(func(s *app.State) error {
				srv, _ := s.Server("fs")
				srv.Sampling = app.SamplingOff
				_, err := s.PutServer(srv, app.PutOptions{Replace: true, Given: app.SetSampling})
				return err
			})
			f.h.call("ping", map[string]any{})
			select {
			case err := <-f.done:
				t.Fatalf("a sampling change ended the session: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			if err := f.core.Update(change); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-f.done:
				if err == nil || !strings.Contains(err.Error(), "changed or removed") {
					t.Fatalf("Run ended with %v", err)
				}
				f.done <- err // for the cleanup
			case <-time.After(wait):
				t.Fatal("the session outlived its server's configuration")
			}
		})
	}
}

// A confined server's allowed slots are in its ruleset, a file as that
// file alone: it reads the file its configuration names and nothing else
// in that folder.
func TestConfinedServerReachesItsFileSlot(t *testing.T) {
	if _, err := confine.ABI(); err != nil {
		t.Fatalf("Landlock: %v", err)
	}
	dir := mkdir(t, "data")
	db, other := filepath.Join(dir, "app.sqlite"), filepath.Join(dir, "other.txt")
	os.WriteFile(db, []byte("rows"), 0o644)
	os.WriteFile(other, []byte("secret"), 0o644)
	nosy := apptest.Program(t, "mcp/confine/testdata/nosy")
	srv := app.Server{Name: "fs", Type: app.TransportStdio, Confine: true, Command: nosy, Env: map[string]string{"DB": db}}
	f := startPrepared(t, srv, func(s *app.State) error {
		if _, err := s.PutServer(srv, app.PutOptions{Replace: true}); err != nil {
			return err
		}
		return s.DecideRequest(app.Decision{Server: "fs", Root: db, Verdict: app.Allow, Scope: app.Always})
	}, nil)
	h := f.h
	h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if text := h.toolOrError("try", map[string]any{"op": "read", "path": db}); !strings.Contains(text, `"ok":true`) {
		t.Errorf("the confined server cannot read its file slot: %s", text)
	}
	if text := h.toolOrError("try", map[string]any{"op": "read", "path": other}); !strings.Contains(text, "permission denied") {
		t.Errorf("the confined server read beside its file slot: %s", text)
	}
}

// A server held by a folder of its configuration, with no app running to
// ask: the host's initialize gets an error naming the folder and the
// command that allows it, and no server is started.
func TestHeldServerRefusesTheHost(t *testing.T) {
	work := mkdir(t, "work")
	srv := app.Server{Name: "fs", Type: app.TransportStdio, Env: map[string]string{"WORK_DIR": work}}
	srv.Command = apptest.Program(t, "mcp/bridge/testdata/inputserver")
	f := startPrepared(t, srv, func(s *app.State) error {
		_, err := s.PutServer(srv, app.PutOptions{Replace: true})
		return err
	}, nil)
	var res struct {
		Error *struct{ Message string } `json:"error"`
	}
	json.Unmarshal(f.h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}}), &res)
	if res.Error == nil || !strings.Contains(res.Error.Message, "waiting for your decision on "+work) ||
		!strings.Contains(res.Error.Message, "rootkeeper grant fs "+work) {
		t.Fatalf("initialize of a held server: %+v", res.Error)
	}
}
