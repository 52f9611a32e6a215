package bridge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"rootkeeper/mcp"
)

// The bridge passes most lines without decoding them, after a byte search
// for the names it must act on ("roots/list", "inputRequests", …). A
// server must not be able to spell one of them so that the search misses
// it while the host still reads it: as an escape ("roots\/list",
// "roots\u002flist", "input\u0052equests"), in another case or twice
// ({"method":"roots/list","Method":"ping"}, which Go's encoding/json, the
// bridge's decoder, reads as ping and a JavaScript host as roots/list). So
// a line that may hide a name (disguised) is decoded, and decoding reads
// exact keys only and refuses a message that spells one of the keys the
// bridge acts on twice or in another case (fields): what the bridge then
// decides on is what any host reads.

// codeInvalidRequest is JSON-RPC's Invalid Request.
const codeInvalidRequest = -32600

// errAmbiguous is a message with a key the bridge acts on spelled twice or
// in another case.
var errAmbiguous = errors.New("a key spelled twice or in another case")

// errNotObject is a message that is not a JSON object.
var errNotObject = errors.New("not a JSON object")

// disguised reports whether line may hide a name from a plain byte search:
// it has an escaped '/' or a \u escape of an ASCII letter or '/', or a
// character that case folding (Go's encoding/json matches keys with it)
// makes an ASCII letter: ſ (s) and K, the Kelvin sign (k). An escaped
// backslash before such text makes a false alarm, which costs only a
// decode.
func disguised(line []byte) bool {
	if bytes.Contains(line, []byte(`\/`)) || bytes.Contains(line, []byte("\u017f")) || bytes.Contains(line, []byte("\u212a")) {
		return true
	}
	// Encoders escape <, >, & (Go) and non-ASCII (Python) often, and
	// letters never: look for the escapes of '/' and of 0x40-0x7f only,
	// one pass each, rather than at every escape.
	if !bytes.Contains(line, []byte(`\u00`)) {
		return false
	}
	for _, esc := range []string{`\u002f`, `\u002F`, `\u004`, `\u005`, `\u006`, `\u007`} {
		if bytes.Contains(line, []byte(esc)) {
			return true
		}
	}
	return false
}

// containsFold reports whether s holds word (ASCII, lower case, with a 'q'
// in it at index q) in any case, looking only around its q's.
func containsFold(s []byte, word string, q int) bool {
	for _, c := range []byte{'q', 'Q'} {
		for rest, off := s, 0; ; {
			i := bytes.IndexByte(rest, c)
			if i < 0 {
				break
			}
			at := off + i - q
			if at >= 0 && at+len(word) <= len(s) && bytes.EqualFold(s[at:at+len(word)], []byte(word)) {
				return true
			}
			rest, off = rest[i+1:], off+i+1
		}
	}
	return false
}

// mentionsInputRequests reports whether line may hold inputRequests in any
// case.
func mentionsInputRequests(line []byte) bool {
	return containsFold(line, "inputrequests", strings.IndexByte("inputrequests", 'q'))
}

// headerKeys are the keys of a message the bridge acts on.
var headerKeys = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// fields decodes the JSON object raw and returns the values of names, each
// read on its exact key. It fails with errAmbiguous when one of names
// appears twice or in another case (Unicode case folding, as Go's
// encoding/json matches), and with errNotObject when raw is not an object.
func fields(raw []byte, names ...string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errNotObject
	}
	out := make(map[string]json.RawMessage, len(names))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errNotObject
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, errNotObject
		}
		for _, n := range names {
			if !strings.EqualFold(key, n) {
				continue
			}
			if _, seen := out[n]; seen || key != n {
				return nil, errAmbiguous
			}
			out[n] = v
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, errNotObject
	}
	return out, nil
}

// parseHeader decodes a message's header on its exact keys (see fields).
// A method that is not a string leaves Method empty, as before.
func parseHeader(raw []byte) (header, error) {
	f, err := fields(raw, headerKeys...)
	if err != nil {
		return header{}, err
	}
	h := header{ID: f["id"], Params: f["params"], Result: f["result"], Error: f["error"]}
	if m, ok := f["method"]; ok && json.Unmarshal(m, &h.Method) != nil {
		return header{}, errNotObject
	}
	return h, nil
}

// refuseAmbiguous drops a message that spells a key the bridge acts on
// twice or in another case (see fields), from who: a request is answered
// with an error to its sender (back), a response is turned into an error
// for the side that waits for it (forth), so that nobody waits for ever.
func (b *bridge) refuseAmbiguous(raw json.RawMessage, back, forth lineSink, who string) {
	if b.log != nil {
		b.log.Warn("refused a message that spells jsonrpc, id, method or params twice or in another case", "from", who)
	}
	var m map[string]json.RawMessage
	json.Unmarshal(raw, &m)
	id, ok := m["id"]
	if !ok || string(id) == "null" {
		return
	}
	e := &jsonrpc.Error{Code: codeInvalidRequest, Message: "rootkeeper bridge: refused a message that spells jsonrpc, id, method, params or result twice or in another case"}
	if _, request := m["method"]; request {
		back.writeJSON(errorResponse(id, e))
	} else if forth != nil {
		forth.writeJSON(errorResponse(id, e))
	}
}

// dropHostRoots removes from a host's request the input responses that
// answer roots (an object with a roots key): the server's roots come from
// Rootkeeper only (the bridge answers its roots input requests, and adds
// its answers after this). It reports false when the params spell
// inputResponses twice or in another case.
func (b *bridge) dropHostRoots(raw json.RawMessage) (json.RawMessage, bool) {
	top, err := fields(raw, "params")
	if err != nil || len(top["params"]) == 0 {
		return raw, !errors.Is(err, errAmbiguous)
	}
	f, err := fields(top["params"], "inputResponses")
	if err != nil {
		return raw, !errors.Is(err, errAmbiguous)
	}
	var responses map[string]json.RawMessage
	if json.Unmarshal(f["inputResponses"], &responses) != nil || len(responses) == 0 {
		return raw, true
	}
	dropped := false
	for id, r := range responses {
		var obj map[string]json.RawMessage
		if json.Unmarshal(r, &obj) != nil {
			continue
		}
		for k := range obj {
			if strings.EqualFold(k, "roots") {
				delete(responses, id)
				dropped = true
				break
			}
		}
	}
	if !dropped {
		return raw, true
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(top["params"], &p) != nil {
		return raw, true
	}
	p["inputResponses"], _ = json.Marshal(responses)
	return replaceParams(raw, p), true
}

// tooLongError is a message longer than maxLine, dropped; head is its
// start, from which its id may be read.
type tooLongError struct{ head []byte }

func (e *tooLongError) Error() string {
	return fmt.Sprintf("a message is longer than %d MiB", maxLine>>20)
}

// headKeep is how much of a dropped message is kept to find its id.
const headKeep = 64 << 10

// skip reads the rest of an over-long line (read is what was read of it,
// err how the last read ended) and drops it, keeping its head. An error
// other than a full buffer ends the line there.
func (l *lineReader) skip(read []byte, err error) error {
	long := &tooLongError{head: bytes.Clone(read[:min(len(read), headKeep)])}
	for err == bufio.ErrBufferFull {
		_, err = l.r.ReadSlice('\n')
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return long
}

// headOf reads what the start of a dropped message says: its id, and
// whether it is a request (a method came before the cut) or a response (a
// result or an error did). Neither is sure when the cut came first.
func headOf(head []byte) (id json.RawMessage, request, response bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok {
		case "method":
			request = true
		case "result", "error":
			response = true
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break
		}
		if tok == "id" {
			id = v
		}
	}
	if request && response {
		return nil, false, false
	}
	return id, request, response
}

// refuseTooLong answers a dropped over-long message from who: a request
// gets an error back to its sender (back), a response becomes an error for
// the side waiting for it (forth); one whose id or kind cannot be read
// from its start is only logged.
func (b *bridge) refuseTooLong(long *tooLongError, back, forth lineSink, who string) {
	if b.log != nil {
		b.log.Warn("dropped a message longer than the limit", "from", who, "limit-MiB", maxLine>>20)
	}
	id, request, response := headOf(long.head)
	if len(id) == 0 || string(id) == "null" {
		return
	}
	e := &jsonrpc.Error{Code: mcp.CodeInternalError, Message: fmt.Sprintf("rootkeeper bridge: %s sent a message longer than %d MiB; it was dropped", who, maxLine>>20)}
	switch {
	case request:
		back.writeJSON(errorResponse(id, e))
	case response && forth != nil:
		forth.writeJSON(errorResponse(id, e))
	}
}
