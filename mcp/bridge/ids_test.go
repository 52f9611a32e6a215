package bridge

import (
	"bytes"
	"encoding/json"
	"testing"
)

// idsOracle reads a message's id the slow, sure way: decoded whole, on
// exact keys. valid is false for what is no JSON-RPC message (not an
// object; a method with a result or an error).
func idsOracle(msg []byte) (request, response json.RawMessage, valid bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m == nil {
		return nil, nil, false
	}
	id, hasID := m["id"]
	_, method := m["method"]
	_, result := m["result"]
	_, isErr := m["error"]
	if method && (result || isErr) {
		return nil, nil, false
	}
	if method && hasID && string(id) != "null" {
		request = id
	}
	if !method && hasID && (result || isErr) {
		response = id
	}
	return request, response, true
}

var idCases = []string{
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
	`{"method":"tools/call","params":{"a":[1,2,{"id":3}]},"id":"x\"y","jsonrpc":"2.0"}`,
	` { "id" : 12 , "method" : "ping" } `,
	`{"id":null,"method":"ping"}`,
	`{"method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`,
	`{"result":{"content":[{"type":"text","text":"a \"quoted\" \\ id"}]},"jsonrpc":"2.0","id":8}`,
	`{"result":{"x":"\\\\"},"id":[1,2]}`,
	`{"error":{"code":-32601,"message":"}]{["},"id":"e","jsonrpc":"2.0"}`,
	`{"id":5,"method":"elicitation/create","params":{}}`,
	`{"id":5,"result":{},"method":"x"}`,
	`{"result":1}`,
	`{"id":1}`,
	`{}`,
	`[{"id":1,"method":"a"}]`,
	`{"id":1,"method":"a"`,
	`{"id":1,"method":"a",}`,
	`{"id" 1}`,
	`{"\u0069d":1,"method":"a"}`,
	`{"id":1,"\u006dethod":"a"}`,
	`{"id":tru,"method":"a"}`,
	`{"id":1e3,"result":true}`,
	`{"id":-1.5,"error":{}}`,
	`not json`,
	``,
}

// TestIDsAgreeWithDecoding holds the scanning requestID and responseID to
// a decoding of the whole message, on messages valid and not.
func TestIDsAgreeWithDecoding(t *testing.T) {
	for _, c := range idCases {
		checkIDs(t, []byte(c))
	}
}

func checkIDs(t *testing.T, msg []byte) {
	t.Helper()
	wantReq, wantResp, valid := idsOracle(msg)
	gotReq, okReq := requestID(msg)
	gotResp, okResp := responseID(msg)
	if !valid {
		// Nothing to agree with; it must not panic, and an id it finds
		// is a value of msg.
		if okReq && !bytes.Contains(msg, gotReq) || okResp && !bytes.Contains(msg, gotResp) {
			t.Errorf("%q: ids %q %q not in the message", msg, gotReq, gotResp)
		}
		return
	}
	if okReq != (wantReq != nil) || !bytes.Equal(gotReq, wantReq) {
		t.Errorf("requestID(%q) = %q, %v; want %q", msg, gotReq, okReq, wantReq)
	}
	if okResp != (wantResp != nil) || !bytes.Equal(gotResp, wantResp) {
		t.Errorf("responseID(%q) = %q, %v; want %q", msg, gotResp, okResp, wantResp)
	}
}

// FuzzIDs is TestIDsAgreeWithDecoding on messages the fuzzer makes.
func FuzzIDs(f *testing.F) {
	for _, c := range idCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		var m map[string]json.RawMessage
		if json.Unmarshal(msg, &m) == nil && duplicateKeys(msg) {
			return // the oracle keeps the last, the scan the first
		}
		checkIDs(t, msg)
	})
}

// duplicateKeys reports whether the object msg spells a top-level key
// twice, or one of id, method, result, error in another case.
func duplicateKeys(msg []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if _, err := dec.Token(); err != nil {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		k, _ := tok.(string)
		if seen[k] {
			return true
		}
		seen[k] = true
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return false
		}
	}
	return false
}
