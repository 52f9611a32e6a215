package bridge

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/mcp"
)

// A message longer than 16 MiB, from the host or from the server, is
// dropped and its request answered with an error that says so; the
// session goes on. (Ending the bridge would take the host's whole session
// down for one oversized reply, and the README promises 16 MiB on every
// transport.)
func TestOverLongMessageIsRefusedAndTheBridgeGoesOn(t *testing.T) {
	f := start(t, app.Server{}, nil)
	h := f.h
	h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}})
	h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	tooBig := strings.Repeat("x", 17<<20)
	check := func(what string, resp json.RawMessage) {
		t.Helper()
		var r struct {
			Error struct {
				Code    int
				Message string
			} `json:"error"`
		}
		json.Unmarshal(resp, &r)
		if !strings.Contains(r.Error.Message, "longer than 16 MiB") {
			t.Errorf("%s: got %.300s; want an error saying longer than 16 MiB", what, resp)
		}
		if got := h.tool("echo", map[string]any{"text": "still here"}, nil); got != "still here" {
			t.Errorf("after %s the bridge answers %q", what, got)
		}
	}
	check("a 17 MiB request from the host", h.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": tooBig}}))
	check("a 17 MiB reply from the server", h.call("resources/read", map[string]any{"uri": fmt.Sprintf("mem://%d", 17<<20)}))
}

// A server that floods roots/list and never reads the answers is not read
// on once its backlog of unread answers is full, and is stopped as hostile
// when no answer drains for the stall limit: the bridge ends saying so,
// and the server is gone.
func TestServerThatDoesNotReadItsAnswersIsStopped(t *testing.T) {
	srv := app.Server{Command: apptest.Program(t, "mcp/testdata/hostile"), Args: []string{"-mode", "deaf-flood"}}
	f := startWith(t, srv, nil, func(o *Options) {
		o.Backlog = mcp.BacklogLimits{Requests: 16, Stall: 300 * time.Millisecond}
	})
	f.h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}})
	f.h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	var err error
	select {
	case err = <-f.done:
	case <-time.After(wait):
		t.Fatal("the bridge still runs beside a server that asks and never reads")
	}
	f.done <- err // for the fixture's cleanup
	if !mcp.IsHostile(err) || !strings.Contains(err.Error(), `server "fs"`) || !strings.Contains(err.Error(), "16 requests") {
		t.Fatalf("Run returned %v; want the server stopped as hostile after 16 requests", err)
	}
}
