package bridge

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// sdkServer is an MCP server of the Go SDK, served over HTTP by handler
// (streamable or SSE) behind a check of the configured token. Its tools:
// "roots" asks the client for its roots (roots/list, server to client);
// "capabilities" returns the client capabilities it was given; "echo"
// returns its text; "changes" counts the list_changed it got.
func sdkServer(t *testing.T, transport string) string {
	t.Helper()
	return sdkServerWith(t, transport, nil, nil)
}

// sdkServerWith is sdkServer with the streamable handler's options, and a
// channel told (if not nil) when a "wait" call begins; its
// tool "wait" answers once "release" has been called.
func sdkServerWith(t *testing.T, transport string, opts *sdk.StreamableHTTPOptions, waiting chan<- struct{}) string {
	t.Helper()
	var changes atomic.Int64
	released := make(chan struct{})
	var releaseOnce sync.Once
	newServer := func(*http.Request) *sdk.Server {
		s := sdk.NewServer(&sdk.Implementation{Name: "sdkserver", Version: "1"}, &sdk.ServerOptions{
			RootsListChangedHandler: func(context.Context, *sdk.RootsListChangedRequest) { changes.Add(1) },
		})
		text := func(s string) *sdk.CallToolResult {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
		}
		sdk.AddTool(s, &sdk.Tool{Name: "roots"}, func(ctx context.Context, req *sdk.CallToolRequest, _ any) (*sdk.CallToolResult, any, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return text("error " + err.Error()), nil, nil
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return text(strings.Join(uris, " ")), nil, nil
		})
		sdk.AddTool(s, &sdk.Tool{Name: "capabilities"}, func(ctx context.Context, req *sdk.CallToolRequest, _ any) (*sdk.CallToolResult, any, error) {
			data, _ := json.Marshal(req.Session.InitializeParams().Capabilities)
			return text(string(data)), nil, nil
		})
		sdk.AddTool(s, &sdk.Tool{Name: "echo"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*sdk.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
		sdk.AddTool(s, &sdk.Tool{Name: "wait"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ any) (*sdk.CallToolResult, any, error) {
			if waiting != nil {
				waiting <- struct{}{}
			}
			select {
			case <-released:
				return text("released"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
		sdk.AddTool(s, &sdk.Tool{Name: "release"}, func(context.Context, *sdk.CallToolRequest, any) (*sdk.CallToolResult, any, error) {
			releaseOnce.Do(func() { close(released) })
			return text("ok"), nil, nil
		})
		sdk.AddTool(s, &sdk.Tool{Name: "changes"}, func(context.Context, *sdk.CallToolRequest, any) (*sdk.CallToolResult, any, error) {
			return text(strings.Repeat("x", int(changes.Load()))), nil, nil
		})
		return s
	}
	var h http.Handler
	if transport == app.TransportSSE {
		h = sdk.NewSSEHandler(newServer, nil)
	} else {
		h = sdk.NewStreamableHTTPHandler(newServer, opts)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// A server reached over HTTP (streamable HTTP, and the older HTTP+SSE) is
// bridged like a stdio one: its roots/list, which arrives on an event
// stream, is answered from the one rule, a grant reaches it through
// list_changed, it sees Rootkeeper's roots capability, the configured
// header reaches it, the host's folder becomes a request, and a message of
// megabytes passes whole.
func TestHTTPServers(t *testing.T) {
	for _, transport := range []string{app.TransportHTTP, app.TransportSSE} {
		t.Run(string(transport), func(t *testing.T) {
			hostDir := mkdir(t, "host")
			f := startWith(t, app.Server{Type: transport, URL: sdkServer(t, transport), Headers: map[string]string{"Authorization": "Bearer t0ken"}},
				func(json.RawMessage) any {
					return map[string]any{"roots": []any{map[string]any{"uri": uri(hostDir)}}}
				})
			h := f.h
			init := h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "clientInfo": map[string]any{"name": "code", "version": "1"},
				"capabilities": map[string]any{"roots": map[string]any{"listChanged": true}}})
			if !strings.Contains(string(init), `"sdkserver"`) {
				t.Fatalf("initialize: %s", init)
			}
			h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
			if got := h.tool("roots", nil, nil); got != uri(f.a) {
				t.Fatalf("roots = %q, want %q", got, uri(f.a))
			}
			if caps := h.tool("capabilities", nil, nil); !strings.Contains(caps, `"roots":{"listChanged":true}`) {
				t.Errorf("the server saw capabilities %s", caps)
			}
			f.core.Update(func(s *app.State) error { return s.Decide(app.Decision{Server: "fs", Root: f.b, Verdict: app.Allow}) })
			want := []string{uri(f.a), uri(f.b)}
			slices.Sort(want)
			h.eventually("roots", strings.Join(want, " "))
			apptest.Eventually(t, "the server to get list_changed", func() (bool, string) { return h.tool("changes", nil, nil) != "", "" })
			apptest.Until(t, f.core, "the host's folder to become a request", func(s *app.Snapshot) bool {
				_, ok := s.State.Request("fs", hostDir)
				return ok
			})
			big := strings.Repeat("0123456789abcdef", 3<<20/16)
			if got := h.tool("echo", map[string]any{"text": big}, nil); got != big {
				t.Errorf("a 3 MiB message came back %d bytes long", len(got))
			}
		})
	}
}

// A server that cannot be reached, or refuses the bridge (a wrong token):
// the host's initialize gets an error naming the server's URL.
func TestHTTPServerUnreachable(t *testing.T) {
	url := sdkServer(t, app.TransportHTTP)
	for name, srv := range map[string]app.Server{
		"refused":     {Type: app.TransportHTTP, URL: url, Headers: map[string]string{"Authorization": "Bearer wrong"}},
		"unreachable": {Type: app.TransportHTTP, URL: "http://127.0.0.1:1/mcp"},
	} {
		t.Run(name, func(t *testing.T) {
			f := startWith(t, srv, nil)
			res := string(f.h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}}))
			if !strings.Contains(res, `"error"`) || !strings.Contains(res, srv.URL) {
				t.Fatalf("initialize: %s", res)
			}
		})
	}
}

// The URL an unreachable server is named by in the host's error hides the
// secrets of its query (they come from the keyring; nobody should read
// them in a host's log), Go's own error text included.
func TestHTTPErrorHidesTheURLsSecret(t *testing.T) {
	const key = "sk-live-Zz9Yy8Xx7Ww6Vv5Uu4"
	f := startWith(t, app.Server{Type: app.TransportHTTP, URL: "http://127.0.0.1:1/mcp?api_key=" + key + "&region=eu"}, nil)
	raw := f.h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}})
	var res struct{ Error struct{ Message string } }
	json.Unmarshal(raw, &res)
	if !strings.Contains(res.Error.Message, "http://127.0.0.1:1/mcp?api_key=(secret)&region=eu") || strings.Contains(string(raw), key) {
		t.Fatalf("initialize: %s", raw)
	}
}

// A server that answers in JSON holds each reply until its result is
// ready: a request that waits must not hold the host's next ones (here the
// very request that releases it).
func TestHTTPRequestsDoNotWaitForEachOther(t *testing.T) {
	waiting := make(chan struct{}, 1)
	url := sdkServerWith(t, app.TransportHTTP, &sdk.StreamableHTTPOptions{JSONResponse: true}, waiting)
	f := startWith(t, app.Server{Type: app.TransportHTTP, URL: url, Headers: map[string]string{"Authorization": "Bearer t0ken"}}, nil)
	h := f.h
	h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}})
	h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	waited := make(chan string, 1)
	go func() { waited <- h.tool("wait", nil, nil) }()
	<-waiting // "wait" has reached the server, and waits
	released := make(chan string, 1)
	go func() { released <- h.tool("release", nil, nil) }()
	select {
	case got := <-released:
		if got != "ok" {
			t.Fatalf("release = %q", got)
		}
	case <-time.After(wait):
		t.Fatal("the second request waited for the first one's answer")
	}
	select {
	case got := <-waited:
		if got != "released" {
			t.Fatalf("wait = %q", got)
		}
	case <-time.After(wait):
		t.Fatal("the waiting request never got its answer")
	}
}
