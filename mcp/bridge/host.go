package bridge

// From the host: its messages relayed to the server, its initialize and
// capabilities rewritten, its requests tracked for a restart.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"rootkeeper/app"
)

// fromHost relays the host's messages to the server until EOF.
func (b *bridge) fromHost(in io.Reader) error {
	r := newLineReader(in)
	for {
		line, err := r.next()
		var long *tooLongError
		if errors.As(err, &long) {
			b.rmu.RLock()
			b.refuseTooLong(long, b.host, b.cur.w, "the host")
			b.rmu.RUnlock()
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		b.rmu.RLock()
		out := b.hostMessage(line)
		if out != nil && b.restartable() {
			b.noteRequests(out)
		}
		p := b.cur
		if out != nil {
			err = p.w.write(out)
		}
		b.rmu.RUnlock()
		if err != nil && !p.replaced.Load() {
			return err
		}
	}
}

// hostMessage rewrites (or drops, returning nil) one line from the host.
func (b *bridge) hostMessage(line []byte) []byte {
	// Most messages need nothing: pass them without decoding them.
	if !bytes.Contains(line, []byte(methodInitialize)) && !bytes.Contains(line, []byte("roots")) &&
		!bytes.Contains(line, []byte(metaCapabilities)) && !bytes.Contains(line, []byte("inputResponses")) &&
		!bytes.Contains(line, []byte(ownIDPrefix)) && !b.trackable(line) && !disguised(line) {
		return line
	}
	return mapBatch(line, b.hostOne)
}

// trackable reports whether line may be a request whose result can carry
// input requests (2026-07-28 on), which the bridge must remember. Sessions
// of earlier revisions have none: their requests, large ones included,
// pass without being decoded.
func (b *bridge) trackable(line []byte) bool {
	if !bytes.Contains(line, []byte(`"tools/call"`)) && !bytes.Contains(line, []byte(`"prompts/get"`)) &&
		!bytes.Contains(line, []byte(`"resources/read"`)) {
		return false
	}
	b.mu.Lock()
	version := b.session.ProtocolVersion
	b.mu.Unlock()
	return version == "" || version >= inputRequestsSince || bytes.Contains(line, []byte(metaProtocolVersion))
}

// hostOne handles one message from the host; nil drops it.
func (b *bridge) hostOne(raw json.RawMessage) json.RawMessage {
	h, err := parseHeader(raw)
	if errors.Is(err, errAmbiguous) {
		b.refuseAmbiguous(raw, b.host, nil, "the host")
		return nil
	}
	if err != nil {
		return raw // not ours to judge: the server answers it
	}
	switch {
	case h.isResponse() && isOwnID(h.ID):
		b.hostRootsAnswer(h)
		return nil
	case h.Method == methodRootsListChanged:
		// The host's folders changed: ask for them again; the server is not
		// told (its roots are Rootkeeper's).
		b.askHostRoots()
		return nil
	case h.Method == methodInitialize:
		return b.hostInitialize(raw, h)
	case h.Method == methodInitialized:
		b.mu.Lock()
		b.serverReady, b.initialized = true, true
		ask := b.hostRootsCap
		b.mu.Unlock()
		if ask {
			defer b.askHostRoots()
		}
		return raw
	}
	if h.isRequest() {
		raw = b.rewriteMeta(raw, h)
		var ok bool
		if raw, ok = b.dropHostRoots(raw); !ok {
			b.refuseAmbiguous(raw, b.host, nil, "the host")
			return nil
		}
		if h, err = parseHeader(raw); err != nil {
			return raw
		}
		switch h.Method {
		case "tools/call", "prompts/get", "resources/read":
			if b.trackable(raw) {
				raw = b.trackRequest(raw, h)
			}
		}
	}
	return raw
}

// hostInitialize remembers who the host is and whether it has roots, and
// rewrites its roots capability to Rootkeeper's.
func (b *bridge) hostInitialize(raw json.RawMessage, h header) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(h.Params, &p) != nil {
		return raw
	}
	var info struct{ Name, Version string }
	json.Unmarshal(p["clientInfo"], &info)
	var version string
	json.Unmarshal(p["protocolVersion"], &version)
	caps, declared := b.rewriteCaps(p["capabilities"])
	p["capabilities"] = caps
	b.mu.Lock()
	b.hostRootsCap = declared
	b.session.Host, b.session.HostVersion = shown(info.Name), shown(info.Version)
	if b.session.ProtocolVersion == "" {
		b.session.ProtocolVersion = shown(version)
	}
	b.mu.Unlock()
	b.publish()
	out := replaceParams(raw, p)
	b.mu.Lock()
	b.initMsg = out
	b.mu.Unlock()
	return out
}

// rewriteCaps returns the capabilities the server is shown: the host's,
// with roots replaced by Rootkeeper's (listChanged; none for rootsMode off,
// args or env), and whether the host declared roots.
func (b *bridge) rewriteCaps(raw json.RawMessage) (json.RawMessage, bool) {
	caps := map[string]json.RawMessage{}
	if len(raw) > 0 && json.Unmarshal(raw, &caps) != nil {
		caps = map[string]json.RawMessage{}
	}
	_, declared := caps["roots"]
	delete(caps, "roots")
	if b.srv.Mode() == app.RootsProtocol {
		caps["roots"] = json.RawMessage(`{"listChanged":true}`)
	}
	out, _ := json.Marshal(caps)
	return out, declared
}

// rewriteMeta rewrites the client capabilities a 2026-07-28 request carries
// in its _meta, as for initialize.
func (b *bridge) rewriteMeta(raw json.RawMessage, h header) json.RawMessage {
	if !bytes.Contains(h.Params, []byte(metaCapabilities)) {
		return raw
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(h.Params, &p) != nil {
		return raw
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(p["_meta"], &meta) != nil || meta == nil {
		return raw
	}
	caps, declared := b.rewriteCaps(meta[metaCapabilities])
	meta[metaCapabilities] = caps
	var version string
	json.Unmarshal(meta[metaProtocolVersion], &version)
	var info struct{ Name, Version string }
	json.Unmarshal(meta[metaClientInfo], &info)
	b.mu.Lock()
	b.hostRootsCap = b.hostRootsCap || declared
	if version != "" {
		b.session.ProtocolVersion = shown(version)
	}
	if info.Name != "" {
		b.session.Host, b.session.HostVersion = shown(info.Name), shown(info.Version)
	}
	b.serverReady = true // stateless: there is no initialize to wait for
	b.mu.Unlock()
	p["_meta"], _ = json.Marshal(meta)
	return replaceParams(raw, p)
}

// trackRequest remembers a request whose result may carry input requests,
// and adds the roots answers held for its requestState (a retry after the
// host answered the other input requests).
func (b *bridge) trackRequest(raw json.RawMessage, h header) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(h.Params, &p) != nil {
		return raw
	}
	var state string
	json.Unmarshal(p["requestState"], &state)
	b.mu.Lock()
	held, ok := b.stash[state]
	if ok {
		delete(b.stash, state)
	}
	if len(b.pending) >= maxPending {
		// A server that never answers does not grow this without end;
		// should it ask for roots in answer to one of those forgotten,
		// the host gets an error instead of the roots request.
		clear(b.pending)
	}
	b.pending[string(h.ID)] = &pendingRequest{method: h.Method, params: h.Params}
	b.mu.Unlock()
	if !ok {
		return raw
	}
	var responses map[string]json.RawMessage
	json.Unmarshal(p["inputResponses"], &responses)
	if responses == nil {
		responses = map[string]json.RawMessage{}
	}
	var ours map[string]json.RawMessage
	json.Unmarshal(held, &ours)
	for id, r := range ours {
		responses[id] = r
	}
	p["inputResponses"], _ = json.Marshal(responses)
	out := replaceParams(raw, p)
	var nh header
	json.Unmarshal(out, &nh)
	b.mu.Lock()
	b.pending[string(h.ID)] = &pendingRequest{method: h.Method, params: nh.Params}
	b.mu.Unlock()
	return out
}
