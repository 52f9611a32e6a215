package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/audit"
)

var allVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// rootsEvent is one roots answer a Go test server got.
type rootsEvent struct {
	uris []string
	err  error
}

func (ev rootsEvent) String() string {
	if ev.err != nil {
		return "error " + ev.err.Error()
	}
	return strings.Join(ev.uris, " ")
}

// goServer is an in-process go-sdk server speaking only one protocol
// version. On initialized and on list_changed it asks for the roots (which
// a 2026-07-28 server cannot do); its tool "roots" asks with an input
// request. Every answer goes to events.
type goServer struct {
	version  string
	events   chan rootsEvent
	notified atomic.Int32
}

func newGoServer(version string) *goServer {
	return &goServer{version: version, events: make(chan rootsEvent, 100)}
}

func (g *goServer) fetch(ss *sdk.ServerSession) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res, err := ss.ListRoots(ctx, nil)
	g.events <- toEvent(res, err)
}

func toEvent(res *sdk.ListRootsResult, err error) rootsEvent {
	if err != nil {
		return rootsEvent{err: err}
	}
	uris := []string{}
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	return rootsEvent{uris: uris}
}

func (g *goServer) transport(app.Server) (sdk.Transport, error) {
	opts := &sdk.ServerOptions{
		SupportedProtocolVersions: []string{g.version},
		InitializedHandler: func(ctx context.Context, req *sdk.InitializedRequest) {
			go g.fetch(req.Session)
		},
		RootsListChangedHandler: func(ctx context.Context, req *sdk.RootsListChangedRequest) {
			g.notified.Add(1)
			// From 2026-07-28 a server may not ask on its own (SEP-2322);
			// it learns the roots through input requests. (A go-sdk server
			// only enforces that once a request has carried the version,
			// which made asking here racy.)
			if g.version < modernVersion {
				go g.fetch(req.Session)
			}
		},
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "go-test-server", Version: g.version}, opts)
	s.AddTool(&sdk.Tool{Name: "roots", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			resp, ok := req.Params.InputResponses["roots"]
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"roots": &sdk.ListRootsParams{}}}, nil
			}
			res, _ := resp.(*sdk.ListRootsResult)
			if res == nil {
				return nil, fmt.Errorf("input response %T is not a roots list", resp)
			}
			g.events <- toEvent(res, nil)
			data, _ := json.Marshal(res.Roots)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(data)}}}, nil
		})
	ct, st := sdk.NewInMemoryTransports()
	go s.Run(context.Background(), st)
	return ct, nil
}

// next waits for the server's next roots answer.
func (g *goServer) next(t testing.TB) rootsEvent {
	t.Helper()
	select {
	case ev := <-g.events:
		return ev
	case <-time.After(wait):
		t.Fatalf("%s server: no roots answer within %v", g.version, wait)
	}
	return rootsEvent{}
}

// expect waits until the server has been answered want (earlier answers,
// such as the one on initialized racing a grant, are skipped).
func (g *goServer) expect(t testing.TB, want ...string) {
	t.Helper()
	want = sorted(want)
	deadline := time.After(wait)
	var seen []string
	for {
		select {
		case ev := <-g.events:
			if ev.err == nil && slices.Equal(sorted(ev.uris), want) {
				return
			}
			seen = append(seen, ev.String())
		case <-deadline:
			t.Fatalf("%s server never got %q; got %q", g.version, want, seen)
		}
	}
}

// serversByName routes NewTransport to per-name test servers.
func serversByName(m map[string]*goServer) func(app.Server) (sdk.Transport, error) {
	return func(srv app.Server) (sdk.Transport, error) {
		g := m[srv.Name]
		if g == nil {
			return nil, fmt.Errorf("no test server %q", srv.Name)
		}
		return g.transport(srv)
	}
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestProtocolVersions(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			e := newEnv(t)
			a, b := mkRoot(t, "a"), mkRoot(t, "b c#%ü")
			g := newGoServer(v)
			e.update(func(s *app.State) error {
				return s.AddServer(app.Server{Name: "go", Type: app.TransportStdio, Command: "unused"})
			})
			e.addRoots(a, b)
			e.grant("go", a)
			var logs syncBuffer
			opts := e.fastOptions()
			opts.NewTransport = serversByName(map[string]*goServer{"go": g})
			opts.Logger = slogTo(&logs)
			e.start(opts)
			st := e.waitConnected("go")
			if st.ProtocolVersion != v || st.ServerName != "go-test-server" || st.ServerVersion != v {
				t.Errorf("status %+v, want protocol %s and the server's name and version", st, v)
			}
			ua, ub := app.URIFromPath(a), app.URIFromPath(b)
			modern := v >= modernVersion

			if !modern {
				// Asked on initialized, then told of every change.
				g.expect(t, ua)
				e.grant("go", b)
				g.expect(t, ua, ub)
				e.revoke("go", a)
				g.expect(t, ub)
			} else {
				e.grant("go", b)
				e.revoke("go", a)
			}
			// The input-request path (SEP-2322) answers the same.
			text, err := callText(t, e.m, "go", "roots", nil)
			if err != nil {
				t.Fatalf("tool roots: %v", err)
			}
			var got []sdk.Root
			if err := json.Unmarshal([]byte(text), &got); err != nil {
				t.Fatalf("tool roots returned %q: %v", text, err)
			}
			if len(got) != 1 || got[0].URI != ub || got[0].Name != "b c#%ü" {
				t.Errorf("tool roots = %+v, want only %s named %q", got, ub, "b c#%ü")
			}

			entries, err := audit.Read(e.dir, "go")
			if err != nil || len(entries) == 0 {
				t.Fatalf("audit: %d entries, %v", len(entries), err)
			}
			last := entries[len(entries)-1]
			wantVia := audit.ViaRootsList
			if modern {
				wantVia = audit.ViaInputRequest
			}
			if last.Via != wantVia || last.ProtocolVersion != v || !slices.Equal(last.Roots, []string{ub}) {
				t.Errorf("last audit entry %+v, want via %s, version %s, roots [%s]", last, wantVia, v, ub)
			}
			for _, en := range entries {
				if modern && en.Via == audit.ViaRootsList {
					t.Errorf("a %s server sent roots/list: %+v", v, en)
				}
			}
			warned := strings.Contains(logs.String(), "SEP-2577")
			if warned != modern {
				t.Errorf("deprecation warning logged = %v, want %v; log:\n%s", warned, modern, logs.String())
			}
		})
	}
}

func slogTo(w *syncBuffer) *slogLogger { return newSlog(w) }

// wantRootsNotSupported checks err is exactly the -32601 of rootsMode off.
func wantRootsNotSupported(t testing.TB, err error) {
	t.Helper()
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		t.Fatalf("error %v (%T) is not a JSON-RPC error", err, err)
	}
	if werr.Code != -32601 || werr.Message != "Roots not supported" {
		t.Errorf("error code %d message %q, want -32601 %q", werr.Code, werr.Message, "Roots not supported")
	}
	var data map[string]any
	if err := json.Unmarshal(werr.Data, &data); err != nil || len(data) != 1 || data["reason"] != "Client does not have roots capability" {
		t.Errorf("error data %s, want {\"reason\": \"Client does not have roots capability\"}", werr.Data)
	}
}

func TestRootsModeOff(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			e := newEnv(t)
			a := mkRoot(t, "a")
			g := newGoServer(v)
			e.update(func(s *app.State) error {
				return s.AddServer(app.Server{Name: "off", Type: app.TransportStdio, Command: "unused", RootsMode: app.RootsOff})
			})
			e.addRoots(a)
			e.grant("off", a)
			opts := e.fastOptions()
			opts.NewTransport = serversByName(map[string]*goServer{"off": g})
			e.start(opts)
			e.waitConnected("off")
			if caps := e.m.Session("off"); caps == nil {
				t.Fatal("no session")
			}
			_, err := callText(t, e.m, "off", "roots", nil)
			if v < modernVersion {
				// The server asked with roots/list on initialized (its
				// tool asks too, and fails).
				wantRootsNotSupported(t, g.next(t).err)
				if err == nil {
					t.Error("tool roots succeeded without roots")
				}
			} else {
				// Our own input-request loop refuses, with the same error.
				wantRootsNotSupported(t, err)
			}
			entries, _ := audit.Read(e.dir, "off")
			if len(entries) == 0 {
				t.Fatal("refusals were not audited")
			}
			for _, en := range entries {
				if en.Error != "-32601 Roots not supported" || len(en.Roots) != 0 {
					t.Errorf("audit entry %+v, want the refusal", en)
				}
			}
		})
	}
}

func TestRootsUnavailable(t *testing.T) {
	for _, v := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			e := newEnv(t)
			a := mkRoot(t, "a")
			g := newGoServer(v)
			e.update(func(s *app.State) error {
				return s.AddServer(app.Server{Name: "go", Type: app.TransportStdio, Command: "unused"})
			})
			e.addRoots(a)
			e.grant("go", a)
			opts := e.fastOptions()
			opts.NewTransport = serversByName(map[string]*goServer{"go": g})
			m := NewManager(e.core, opts)
			m.visible = func(*app.Snapshot, string) []app.Root { panic("state is broken") }
			e.m = m
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); m.Run(ctx) }()
			defer func() { cancel(); <-done }()
			e.waitConnected("go")
			check := func(err error) {
				t.Helper()
				var werr *jsonrpc.Error
				if !errors.As(err, &werr) || werr.Code != -32603 {
					t.Errorf("error %v, want -32603", err)
				}
			}
			if v < modernVersion {
				check(g.next(t).err)
			}
			_, err := callText(t, m, "go", "roots", nil)
			check(err)
		})
	}
}

// TestListChangedOnlyWhereChanged grants to one server, then the other:
// each is told once, about its own change.
func TestListChangedOnlyWhereChanged(t *testing.T) {
	e := newEnv(t)
	a, b := mkRoot(t, "a"), mkRoot(t, "b")
	g1, g2 := newGoServer("2025-06-18"), newGoServer("2025-11-25")
	e.update(func(s *app.State) error {
		s.AddServer(app.Server{Name: "one", Type: app.TransportStdio, Command: "unused"})
		return s.AddServer(app.Server{Name: "two", Type: app.TransportStdio, Command: "unused"})
	})
	e.addRoots(a, b)
	opts := e.fastOptions()
	opts.NewTransport = serversByName(map[string]*goServer{"one": g1, "two": g2})
	e.start(opts)
	e.waitConnected("one")
	e.waitConnected("two")
	g1.expect(t)
	g2.expect(t)

	e.grant("one", a)
	g1.expect(t, app.URIFromPath(a))
	e.grant("two", b)
	g2.expect(t, app.URIFromPath(b))
	// A change that leaves both sets as they are tells nobody; the health
	// of a root nobody can see changes nothing either.
	e.update(func(s *app.State) error { s.SearchFolders = []string{"/x"}; return nil })
	e.grant("one", a) // the same decision again
	e.grant("two", b)
	e.update(func(s *app.State) error { return s.Decide(app.Decision{Server: "one", Root: b, Verdict: app.Deny}) })
	e.revoke("one", a)
	g1.expect(t) // told: it sees nothing now
	// A fetch that an earlier notification began may already answer the
	// empty list while the revoke's notification is on its way: the count
	// is read once that notification has come.
	apptest.Eventually(t, "the revoke's list_changed to reach one", func() (bool, string) {
		return g1.notified.Load() >= 2, fmt.Sprint(g1.notified.Load())
	})
	if n1, n2 := g1.notified.Load(), g2.notified.Load(); n1 != 2 || n2 != 1 {
		t.Errorf("list_changed received: one %d (want 2), two %d (want 1)", n1, n2)
	}
}
