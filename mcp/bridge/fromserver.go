package bridge

// From the server: its messages relayed to the host; its roots requests
// and its 2026-07-28 input requests answered here.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"rootkeeper/app/audit"
	"rootkeeper/mcp"
)

// fromServer relays the messages of server process p to the host until
// EOF.
func (b *bridge) fromServer(p *serverProc, out io.Reader) {
	r := newLineReader(out)
	for {
		line, err := r.next()
		var long *tooLongError
		if errors.As(err, &long) {
			if !p.replaced.Load() {
				b.refuseTooLong(long, p.answers, b.host, "the server")
			}
			continue
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !p.replaced.Load() {
				b.log.Warn("reading from the server failed", "error", err)
			}
			return
		}
		if msg := b.serverMessage(p, line); msg != nil {
			if err := b.host.write(msg); err != nil {
				return
			}
		}
	}
}

// serverMessage rewrites (or drops) one line from server process p.
func (b *bridge) serverMessage(p *serverProc, line []byte) []byte {
	if !bytes.Contains(line, []byte(methodListRoots)) && !mentionsInputRequests(line) &&
		!bytes.Contains(line, []byte(`"protocolVersion"`)) && !bytes.Contains(line, []byte(ownIDPrefix)) && !disguised(line) {
		if !b.settle(p, line) {
			return nil
		}
		return line
	}
	if p.replaced.Load() {
		return nil
	}
	return mapBatch(line, func(m json.RawMessage) json.RawMessage { return b.serverOne(p, m) })
}

// settle drops the pending and in-flight entries of the responses in a line
// that passes untouched. It reports false when p was replaced: its output
// is dropped (the host was told to send its requests again).
func (b *bridge) settle(p *serverProc, line []byte) bool {
	b.mu.Lock()
	n := len(b.pending) + len(b.inflight)
	b.mu.Unlock()
	if n == 0 {
		return !p.replaced.Load()
	}
	t := bytes.TrimSpace(line)
	if len(t) > 0 && t[0] == '[' {
		var ids []json.RawMessage
		for _, m := range splitBatch(t) {
			if id, ok := responseID(m); ok {
				ids = append(ids, id)
			}
		}
		return b.settled(p, ids...)
	}
	// One message, as nearly every line is: no slice to make.
	id, ok := responseID(t)
	if !ok {
		return b.settled(p)
	}
	return b.settled(p, id)
}

// settled drops the pending and in-flight entries of ids, responses about
// to be relayed. It reports false when p was replaced.
func (b *bridge) settled(p *serverProc, ids ...json.RawMessage) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Checked under mu: restart marks p replaced before it takes the
	// in-flight requests, so a response is either relayed here or answered
	// by restart, never both.
	if p.replaced.Load() {
		return false
	}
	for _, id := range ids {
		delete(b.pending, string(id))
		delete(b.inflight, string(id))
	}
	return true
}

// serverOne handles one message from the server; nil drops it.
func (b *bridge) serverOne(p *serverProc, raw json.RawMessage) json.RawMessage {
	h, err := parseHeader(raw)
	if errors.Is(err, errAmbiguous) {
		b.refuseAmbiguous(raw, p.answers, b.host, "the server")
		return nil
	}
	if err != nil {
		return raw
	}
	switch {
	case h.isRequest() && h.Method == methodListRoots:
		jerr, res := b.answerRoots(audit.ViaRootsList)
		if jerr != nil {
			p.answers.writeJSON(errorResponse(h.ID, jerr))
		} else {
			p.answers.writeJSON(map[string]any{"jsonrpc": "2.0", "id": h.ID, "result": res})
		}
		return nil
	case h.isResponse() && isOwnID(h.ID):
		// The answer to a replayed initialize: the host had its own.
		return nil
	case h.isResponse() && len(h.Result) > 0:
		var r struct {
			ProtocolVersion string
			InputRequests   map[string]json.RawMessage
			RequestState    string
		}
		f, err := fields(h.Result, "protocolVersion", "inputRequests", "requestState")
		if errors.Is(err, errAmbiguous) {
			return errorResponseRaw(h.ID, &jsonrpc.Error{Code: mcp.CodeInternalError, Message: "rootkeeper bridge: the server's result spells protocolVersion, inputRequests or requestState twice or in another case"})
		}
		json.Unmarshal(f["protocolVersion"], &r.ProtocolVersion)
		json.Unmarshal(f["inputRequests"], &r.InputRequests)
		json.Unmarshal(f["requestState"], &r.RequestState)
		if r.ProtocolVersion != "" {
			b.mu.Lock()
			b.session.ProtocolVersion = shown(r.ProtocolVersion)
			b.mu.Unlock()
			b.publish()
			b.ranConfined(p)
		}
		if len(r.InputRequests) > 0 {
			out := b.inputRequests(p, raw, h, r.InputRequests, r.RequestState)
			if out != nil { // the host gets an answer: no longer in flight
				b.mu.Lock()
				delete(b.inflight, string(h.ID))
				b.mu.Unlock()
			}
			return out
		}
	}
	if h.isResponse() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if p.replaced.Load() {
			return nil // restart answered it
		}
		delete(b.pending, string(h.ID))
		delete(b.inflight, string(h.ID))
	}
	return raw
}

// inputRequests fulfils the roots input requests of a result (SEP-2322)
// so that the host never sees nor answers them. With only roots asked for,
// the bridge sends the request again with the answer, and the host sees
// only the final result; with others too, the host gets the result without
// the roots requests, and its retry gets the roots answers added.
func (b *bridge) inputRequests(proc *serverProc, raw json.RawMessage, h header, reqs map[string]json.RawMessage, state string) json.RawMessage {
	var rootsIDs []string
	for id, r := range reqs {
		m, err := parseHeader(r)
		if errors.Is(err, errAmbiguous) {
			return errorResponseRaw(h.ID, &jsonrpc.Error{Code: mcp.CodeInternalError, Message: "rootkeeper bridge: an input request of the server spells its method twice or in another case"})
		}
		if err == nil && m.Method == methodListRoots {
			rootsIDs = append(rootsIDs, id)
		}
	}
	if len(rootsIDs) == 0 {
		return raw
	}
	b.mu.Lock()
	p := b.pending[string(h.ID)]
	b.mu.Unlock()
	if p == nil {
		// Not a request the bridge saw: nothing to re-send it with.
		return errorResponseRaw(h.ID, &jsonrpc.Error{Code: mcp.CodeInternalError, Message: "rootkeeper bridge: input requests for an unknown request"})
	}
	jerr, res := b.answerRoots(audit.ViaInputRequest)
	if jerr != nil {
		b.mu.Lock()
		delete(b.pending, string(h.ID))
		delete(b.inflight, string(h.ID))
		b.mu.Unlock()
		return errorResponseRaw(h.ID, jerr)
	}
	answers := map[string]json.RawMessage{}
	for _, id := range rootsIDs {
		answers[id] = res
	}
	if len(rootsIDs) == len(reqs) {
		p.rounds++
		if p.rounds > maxRounds {
			return errorResponseRaw(h.ID, &jsonrpc.Error{Code: mcp.CodeInternalError, Message: fmt.Sprintf("%s: the server still asks for input after %d rounds", p.method, maxRounds)})
		}
		var params map[string]json.RawMessage
		if json.Unmarshal(p.params, &params) != nil || params == nil {
			params = map[string]json.RawMessage{}
		}
		params["inputResponses"], _ = json.Marshal(answers)
		if state != "" {
			params["requestState"], _ = json.Marshal(state)
		} else {
			delete(params, "requestState")
		}
		retry, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": h.ID, "method": p.method, "params": params})
		proc.w.write(retry)
		return nil
	}
	// Mixed: the host answers the others; hold ours for its retry.
	var result map[string]json.RawMessage
	json.Unmarshal(h.Result, &result)
	others := map[string]json.RawMessage{}
	for id, r := range reqs {
		if !slices.Contains(rootsIDs, id) {
			others[id] = r
		}
	}
	result["inputRequests"], _ = json.Marshal(others)
	held, _ := json.Marshal(answers)
	b.mu.Lock()
	if len(b.stash) > 256 {
		clear(b.stash) // a server that never sees retries does not grow this
	}
	b.stash[state] = held
	delete(b.pending, string(h.ID))
	b.mu.Unlock()
	var msg map[string]json.RawMessage
	json.Unmarshal(raw, &msg)
	msg["result"], _ = json.Marshal(result)
	out, _ := json.Marshal(msg)
	return out
}

// replaceParams returns raw with its params replaced by p.
func replaceParams(raw json.RawMessage, p map[string]json.RawMessage) json.RawMessage {
	var msg map[string]json.RawMessage
	if json.Unmarshal(raw, &msg) != nil {
		return raw
	}
	msg["params"], _ = json.Marshal(p)
	out, err := json.Marshal(msg)
	if err != nil {
		return raw
	}
	return out
}
