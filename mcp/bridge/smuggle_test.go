package bridge

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

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

// TestServerCannotSmuggleRootsListToTheHost: a server that writes
// roots/list escaped ("roots\/list", "roots\u002flist"), with a second key
// "Method" beside "method", or twice, and that asks for roots in an input
// request under an escaped key, never gets its request to the host, and
// never receives the host's folder, which the test host (reading keys
// exactly, as JavaScript does) would give anyone asking. The bridge's own
// roots/list to the host is the only one the host sees; the smuggled input
// request is answered by the bridge with Rootkeeper's roots.
func TestServerCannotSmuggleRootsListToTheHost(t *testing.T) {
	hostDir := mkdir(t, "host secret")
	var stderr syncBuffer
	f := startWith(t, app.Server{Command: apptest.Program(t, "mcp/bridge/testdata/smuggler")}, func(json.RawMessage) any {
		return map[string]any{"roots": []any{map[string]any{"uri": uri(hostDir), "name": "secret"}}}
	}, func(o *Options) { o.Stderr = &stderr })
	h := f.h
	h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "clientInfo": map[string]any{"name": "claude-code", "version": "2"},
		"capabilities": map[string]any{"roots": map[string]any{"listChanged": true}}})
	h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	// The smuggler sends its requests before it reads the next message:
	// the first ping's answer comes after them, and the test host answers
	// a roots/list as it reads it, before it sends the second ping, whose
	// answer then comes after the smuggler has read whatever the host
	// answered (each way, the bridge relays in order).
	h.call("ping", map[string]any{})
	h.call("ping", map[string]any{})

	// 2026-07-28: an input request for roots under an escaped key. A host
	// that saw it would answer it with its folder in the retry.
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"roots": map[string]any{}}}
	resp := h.call("tools/call", map[string]any{"name": "smuggle", "arguments": map[string]any{}, "_meta": meta})
	var res struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	json.Unmarshal(resp, &res)
	if reqs, ok := res.Result["inputRequests"]; ok {
		t.Errorf("the host was shown the server's input requests %s", reqs)
		h.call("tools/call", map[string]any{"name": "smuggle", "arguments": map[string]any{}, "_meta": meta,
			"requestState": "st", "inputResponses": map[string]any{"r": map[string]any{"roots": []any{map[string]any{"uri": uri(hostDir)}}}}})
	} else if !strings.Contains(string(resp), uri(f.a)) {
		t.Errorf("the smuggled input request was not answered with Rootkeeper's roots: %s", resp)
	}
	// A host's own answer to a roots input request never reaches the server.
	h.call("tools/call", map[string]any{"name": "smuggle", "arguments": map[string]any{}, "_meta": meta,
		"requestState": "other", "inputResponses": map[string]any{"x": map[string]any{"roots": []any{map[string]any{"uri": uri(hostDir)}}}}})
	h.call("ping", map[string]any{})

	if got := stderr.String(); strings.Contains(got, uri(hostDir)) || strings.Contains(got, hostDir) {
		t.Errorf("the server received the host's folder:\n%s", got)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.seen {
		var obj map[string]json.RawMessage
		json.Unmarshal(m, &obj)
		var method, id string
		json.Unmarshal(obj["method"], &method)
		json.Unmarshal(obj["id"], &id)
		if method == methodListRoots && !strings.HasPrefix(id, ownIDPrefix) {
			t.Errorf("the host got the server's roots/list: %s", m)
		}
	}
	if h.asked == 0 {
		t.Error("the bridge never asked the host for its folders: the test host proves nothing")
	}
}

// TestWireNamesCannotHide: the byte search's guard and the exact decode.
func TestWireNamesCannotHide(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{`{"method":"roots\/list"}`, true},
		{`{"method":"roots\u002flist"}`, true},
		{`{"method":"roots\u002Flist"}`, true},
		{`{"m\u0065thod":"x"}`, true},
		{`{"Method":"x","method":"y"}`, false}, // no escape: the literal search sees roots/list if it is there
		{`{"text":"a\u003cb\u003e \n \" \\ é"}`, false},
		{"{\"inputRequeſts\":1}", true},
		{"{\"\u212aey\":1}", true},
		{`{"text":"\u00e9\u4e2d"}`, false},
	} {
		if got := disguised([]byte(c.line)); got != c.want {
			t.Errorf("disguised(%s) = %v, want %v", c.line, got, c.want)
		}
	}
	for _, s := range []string{`{"inputRequests":{}}`, `{"INPUTREQUESTS":{}}`, `{"inputreQuests":1}`, `{"x":"iNpUtReQuEsTs"}`} {
		if !mentionsInputRequests([]byte(s)) {
			t.Errorf("mentionsInputRequests(%s) = false", s)
		}
	}
	if mentionsInputRequests([]byte(`{"questions":"input requested"}`)) {
		t.Error("mentionsInputRequests matched other words")
	}
	for _, c := range []struct {
		msg    string
		method string
		err    error
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"roots\/list"}`, "roots/list", nil},
		{`{"jsonrpc":"2.0","id":1,"m\u0065thod":"roots/list"}`, "roots/list", nil},
		{`{"jsonrpc":"2.0","id":1,"method":"roots/list","Method":"ping"}`, "", errAmbiguous},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","method":"roots/list"}`, "", errAmbiguous},
		{`{"jsonrpc":"2.0","ID":1,"method":"ping"}`, "", errAmbiguous},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"\u212aey\":1,\"para\u017fmſ\":1}", "ping", nil},
		{"{\"id\":1,\"method\":\"ping\",\"param\u017f\":{}}", "", errAmbiguous},
		{`[1]`, "", errNotObject},
	} {
		h, err := parseHeader([]byte(c.msg))
		if err != c.err || h.Method != c.method {
			t.Errorf("parseHeader(%s) = %q, %v; want %q, %v", c.msg, h.Method, err, c.method, c.err)
		}
	}
}
