package bridge

import (
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkRelayLine is the bridge's own work on one line from the server
// (a result of 1 MiB of text, plain or full of escapes, and a small one)
// and from the host (a small tools/call), without processes or pipes: what
// the relay adds to each message.
func BenchmarkRelayLine(b *testing.B) {
	result := func(text string) []byte {
		line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7,
			"result": map[string]any{"contents": []any{map[string]any{"uri": "mem://1", "text": text}}}})
		return line
	}
	// As the TypeScript SDK writes a response: its result first.
	resultFirst := func(text string) []byte {
		r, _ := json.Marshal(map[string]any{"contents": []any{map[string]any{"uri": "mem://1", "text": text}}})
		return []byte(`{"result":` + string(r) + `,"jsonrpc":"2.0","id":7}`)
	}
	lines := []struct {
		name string
		line []byte
	}{
		{"server-1MiB-plain", result(strings.Repeat("abcdefgh", 1<<17))},
		{"server-1MiB-escaped", result(strings.Repeat("a<b>\"c\"\n", 1<<17))},
		{"server-1MiB-result-first", resultFirst(strings.Repeat("abcdefgh", 1<<17))},
		{"server-small", result("hi")},
		{"server-small-result-first", resultFirst("hi")},
	}
	for _, l := range lines {
		b.Run(l.name, func(b *testing.B) {
			br := &bridge{}
			p := &serverProc{}
			b.SetBytes(int64(len(l.line)))
			for range b.N {
				if br.serverMessage(p, l.line) == nil {
					b.Fatal("dropped")
				}
			}
		})
		// A server that holds its roots from its start (every confined
		// one): the bridge remembers each request until its response.
		b.Run(l.name+"-tracked", func(b *testing.B) {
			br := &bridge{inflight: map[string]struct{}{}, pending: map[string]*pendingRequest{}}
			p := &serverProc{}
			request := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
			b.SetBytes(int64(len(l.line)))
			b.ReportAllocs()
			for range b.N {
				br.noteRequests(request)
				if br.serverMessage(p, l.line) == nil {
					b.Fatal("dropped")
				}
			}
			if len(br.inflight) != 0 {
				b.Fatalf("the response did not settle its request: %v", br.inflight)
			}
		})
	}
	host, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call",
		"params": map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}})
	b.Run("host-small", func(b *testing.B) {
		br := &bridge{}
		br.session.ProtocolVersion = "2025-06-18"
		b.SetBytes(int64(len(host)))
		for range b.N {
			if br.hostMessage(host) == nil {
				b.Fatal("dropped")
			}
		}
	})
}
