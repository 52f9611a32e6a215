package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
	"rootkeeper/app/audit"
)

// Method names this package intercepts.
const (
	methodListRoots        = "roots/list"
	methodRootsListChanged = "notifications/roots/list_changed"
	methodDiscover         = "server/discover"
	methodInitialize       = "initialize"
	methodCallTool         = "tools/call"
	methodGetPrompt        = "prompts/get"
	methodReadResource     = "resources/read"
)

// JSON-RPC error codes of roots answers.
const (
	CodeMethodNotFound = -32601
	CodeInternalError  = -32603
)

// maxRounds bounds the input-request rounds of one client request.
const maxRounds = 10

// ErrRootsNotSupported is the answer to roots/list for a server that may not
// have roots (rootsMode off, args or env): the error the MCP specification
// gives for a client without the roots capability.
func ErrRootsNotSupported() *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    CodeMethodNotFound,
		Message: "Roots not supported",
		Data:    json.RawMessage(`{"reason":"Client does not have roots capability"}`),
	}
}

func errRootsUnavailable(reason string) *jsonrpc.Error {
	data, _ := json.Marshal(map[string]string{"reason": reason})
	return &jsonrpc.Error{Code: CodeInternalError, Message: "Internal error: roots unavailable", Data: data}
}

// rootsFor computes the roots the adapter's server may see now, or the
// JSON-RPC error to answer instead (RootsAnswer).
func (m *Manager) rootsFor(a *adapter) ([]app.Root, *jsonrpc.Error) {
	if a.mode != app.RootsProtocol {
		return nil, ErrRootsNotSupported()
	}
	roots, err := RootsAnswer(m.core.Snapshot(), a.cfg.Name, m.visible)
	if err != nil && err.Code == CodeInternalError {
		m.log.Error("cannot compute roots", "server", a.cfg.Name, "error", err.Message)
	}
	return roots, err
}

// answerRoots is the one place a managed server's roots are answered,
// whether it sent roots/list or embedded the request in a result (via says
// which). It records the answer in the audit log and the status.
func (a *adapter) answerRoots(cs *sdk.ClientSession, via string) (*sdk.ListRootsResult, error) {
	// The session's version is known once Connect has returned; reading
	// cs.InitializeResult here would race with Connect.
	version := ""
	a.mu.Lock()
	switch {
	case cs != nil && cs == a.sess:
		version = a.version
	case a.sess == nil:
		version = a.handshake // asked during the handshake
	}
	a.mu.Unlock()
	roots, err := a.answer(version, via)
	if err != nil {
		return nil, err
	}
	return RootsResult(roots), nil
}

// answer is the roots answer to server a over protocol version (via
// roots/list or an input request), recorded in the audit log and the
// status: the roots, or the error to send instead.
func (a *adapter) answer(version, via string) ([]app.Root, *jsonrpc.Error) {
	roots, _, err, e := a.answerNow(version, via)
	a.m.writeAudit(e)
	if err != nil {
		return nil, err
	}
	return roots, nil
}

// answerNow computes the roots answer to server a (encoded, when it is a
// list) and its audit entry, and notes the answer in the status.
func (a *adapter) answerNow(version, via string) ([]app.Root, *encodedRoots, *jsonrpc.Error, audit.Entry) {
	roots, err := a.m.rootsFor(a)
	if err != nil {
		return nil, nil, err, AnswerEntry(a.cfg.Name, version, via, nil, err)
	}
	enc := a.m.encode(roots)
	// The entry shares the encoding's URIs: AnswerEntry's, computed once.
	e := audit.Entry{Time: time.Now().UTC(), Server: a.cfg.Name, ProtocolVersion: version, Roots: enc.uris, Via: via}
	a.update(func(s *app.ServerStatus) { s.LastSent, s.LastSentAt = e.Roots, e.Time })
	return roots, enc, nil, e
}

// answerWire answers a stdio server's roots/list in its connection
// (stdioConn.roots): admitted by the roots gate, answered as by answer;
// the result comes encoded, once for every server given the same list
// (Manager.encode). reply is called once the answer's audit line is
// written: perhaps later, by the goroutine whose write took it along with
// other servers' (audit.Log.AppendThen), so that a crash never leaves a
// server holding an answer the audit log has not recorded. A grant to
// fifty servers went through the SDK's dispatch fifty times (a goroutine
// each, the result encoded each time) and wrote fifty audit lines one by
// one.
func (a *adapter) answerWire(reply func(json.RawMessage, *jsonrpc.Error)) {
	done, refused := a.enterRoots(methodListRoots)
	if refused != nil {
		reply(nil, refused)
		return
	}
	defer done()
	_, enc, err, e := a.answerNow(a.negotiated(), audit.ViaRootsList)
	var result json.RawMessage
	if err == nil {
		result = enc.json
	}
	if a.m.audit == nil {
		reply(result, err)
		return
	}
	// One function for the log to call, not one wrapping another.
	a.m.audit.AppendThen(e, func(werr error) {
		if werr != nil {
			a.m.log.Error("cannot write the audit log", "error", werr)
		}
		reply(result, err)
	})
}

// encodedRoots is a list of roots as each place that writes it needs it.
// It is shared by every server given the same list, and never changed.
type encodedRoots struct {
	of   []app.Root
	json json.RawMessage // the roots/list result, encoded as the SDK encodes it
	uris []string        // each root's URI, for the audit log and the status
	sdk  []*sdk.Root     // the roots as the client holds them (syncRoots)
}

// encode is roots encoded (encodedRoots). The last list encoded is kept,
// so that the servers a change reaches with the same list share one
// encoding, one list of URIs and one of SDK roots: fifty servers each
// told of one grant computed every URI four times and the result once.
func (m *Manager) encode(roots []app.Root) *encodedRoots {
	m.encodedMu.Lock()
	defer m.encodedMu.Unlock()
	if c := m.encoded; c != nil && slices.EqualFunc(roots, c.of, func(x, y app.Root) bool { return x.Path == y.Path && x.Name == y.Name }) {
		return c
	}
	result := RootsResult(roots)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as the SDK's encoder
	enc.Encode(result)
	c := &encodedRoots{of: slices.Clone(roots), json: bytes.TrimRight(buf.Bytes(), "\n"), uris: make([]string, len(roots)), sdk: result.Roots}
	for i, r := range result.Roots {
		c.uris[i] = r.URI
	}
	m.encoded = c
	return c
}

// encodeRoots is roots as a roots/list result, encoded as the SDK encodes
// it (Manager.encode).
func (m *Manager) encodeRoots(roots []app.Root) json.RawMessage { return m.encode(roots).json }

func (m *Manager) writeAudit(e audit.Entry) {
	if m.audit == nil {
		return
	}
	if err := m.audit.Append(e); err != nil {
		m.log.Error("cannot write the audit log", "error", err)
	}
}

// receivingMiddleware answers roots/list itself: the SDK's own handler would
// answer even without the capability, and from a copy of the roots.
func (a *adapter) receivingMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != methodListRoots {
			return next(ctx, method, req)
		}
		cs, _ := req.GetSession().(*sdk.ClientSession)
		res, err := a.answerRoots(cs, audit.ViaRootsList)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}

// sendingMiddleware bounds the server/discover probe, holds back a
// list_changed while the client's roots are being replaced, and fulfils
// input requests (SEP-2322).
func (a *adapter) sendingMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case methodRootsListChanged:
			if a.quiet.Load() {
				return nil, nil
			}
			// Only pings may come before the handshake has ended: a
			// session still connecting is not told of changes; once
			// initialized the server asks, and gets the roots as they are.
			if cs, _ := req.GetSession().(*sdk.ClientSession); cs == nil || cs != a.currentSession() {
				return nil, nil
			}
			a.noteAsked()
		case methodDiscover:
			dctx, cancel := context.WithTimeout(ctx, a.m.opts.DiscoverTimeout)
			defer cancel()
			return next(dctx, method, req)
		case methodInitialize:
			// A server may ask for roots as soon as it is initialized,
			// before Connect returns; remember the version for those answers.
			res, err := next(ctx, method, req)
			if r, ok := res.(*sdk.InitializeResult); ok && err == nil {
				a.mu.Lock()
				a.handshake = r.ProtocolVersion
				a.mu.Unlock()
			}
			return res, err
		case methodCallTool, methodGetPrompt, methodReadResource:
			return a.multiRoundTrip(ctx, next, method, req)
		}
		return next(ctx, method, req)
	}
}

// multiRoundTrip sends req and, while the server answers with input
// requests, fulfils them and sends the request again with the responses
// (SEP-2322). roots/list input requests get answerRoots; an error there
// (rootsMode off, roots unavailable) ends the call with that error, since an
// input response cannot carry one. Rootkeeper offers no sampling or
// elicitation, so those end the call too.
func (a *adapter) multiRoundTrip(ctx context.Context, next sdk.MethodHandler, method string, req sdk.Request) (sdk.Result, error) {
	for round := 1; ; round++ {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		requests, state, needs := inputRequestsOf(res)
		if requests == nil && !needs {
			return res, nil
		}
		if round >= maxRounds {
			return nil, fmt.Errorf("%s: server still asks for input after %d rounds", method, round)
		}
		cs, ok := req.GetSession().(*sdk.ClientSession)
		if !ok {
			return res, nil
		}
		responses := make(sdk.InputResponseMap, len(requests))
		for id, ir := range requests {
			switch p := ir.(type) {
			case *sdk.ListRootsParams:
				r, err := a.answerRoots(cs, audit.ViaInputRequest)
				if err != nil {
					return nil, err
				}
				responses[id] = r
			default:
				return nil, &jsonrpc.Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("input request %q: Rootkeeper does not support %T", id, p)}
			}
		}
		if req, err = retryRequest(cs, req, responses, state); err != nil {
			return nil, err
		}
	}
}

// inputRequestsOf returns the input requests and request state of a result
// that asks for input.
func inputRequestsOf(res sdk.Result) (sdk.InputRequestMap, string, bool) {
	switch r := res.(type) {
	case *sdk.CallToolResult:
		return r.InputRequests, r.RequestState, r.NeedsInput()
	case *sdk.GetPromptResult:
		return r.InputRequests, r.RequestState, r.NeedsInput()
	case *sdk.ReadResourceResult:
		return r.InputRequests, r.RequestState, r.NeedsInput()
	}
	return nil, "", false
}

// retryRequest is req again with the responses and the echoed state, on a
// copy of its params (the caller's are never changed).
func retryRequest(cs *sdk.ClientSession, req sdk.Request, responses sdk.InputResponseMap, state string) (sdk.Request, error) {
	switch p := req.GetParams().(type) {
	case *sdk.CallToolParams:
		cp := *p
		cp.InputResponses, cp.RequestState = responses, state
		return &sdk.ClientRequest[*sdk.CallToolParams]{Session: cs, Params: &cp}, nil
	case *sdk.GetPromptParams:
		cp := *p
		cp.InputResponses, cp.RequestState = responses, state
		return &sdk.ClientRequest[*sdk.GetPromptParams]{Session: cs, Params: &cp}, nil
	case *sdk.ReadResourceParams:
		cp := *p
		cp.InputResponses, cp.RequestState = responses, state
		return &sdk.ClientRequest[*sdk.ReadResourceParams]{Session: cs, Params: &cp}, nil
	}
	return nil, fmt.Errorf("multi round-trip: unsupported params %T", req.GetParams())
}

// syncRoots follows roots changes (pokes) until ctx ends. In protocol mode
// it makes the client's roots equal to the visible set, which sends one
// list_changed when they differ; in args/env mode it restarts the server
// when the paths it was started with are no longer the visible ones. It
// runs on its own goroutine: a server that stops reading may block it
// without blocking anyone else.
func (a *adapter) syncRoots(ctx context.Context) {
	var have []*sdk.Root // what the client holds
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		}
		snap := a.m.core.Snapshot()
		switch a.mode {
		case app.RootsProtocol:
			want := a.wantRoots(snap)
			if c := a.confinedStale(snap); c != 0 {
				// Landlock cannot be widened or narrowed in place.
				a.m.log.Info("visible roots changed; restarting the confined server under a new ruleset", "server", a.cfg.Name)
				a.command(c)
				a.setClientRootsQuietly(have, want)
				have = want
				continue
			}
			if sameRoots(have, want) {
				if a.owed.Swap(false) {
					a.notifyAgain(want)
				}
				continue
			}
			a.owed.Store(false) // the change below tells it anyway
			a.setClientRoots(have, want)
			if len(have) > 0 && len(want) == 0 && !a.m.opts.NoRestartOnEmpty && a.currentSession() != nil {
				a.m.log.Info("server can see nothing now; restarting it so that it forgets its roots", "server", a.cfg.Name)
				a.command(cmdEmptied)
			}
			have = want
		case app.RootsArgs, app.RootsEnv:
			paths := app.VisiblePaths(snap, a.cfg.Name)
			if RunsConfined(a.cfg) {
				paths = app.ReachPaths(snap, a.cfg.Name, paths)
			}
			a.mu.Lock()
			same := slices.Equal(paths, a.startedWith) || (len(paths) == 0 && len(a.startedWith) == 0)
			running := a.sess != nil
			old := a.startedWith
			a.mu.Unlock()
			if !same && running {
				a.m.log.Info("visible roots changed; restarting the server with the new ones", "server", a.cfg.Name, "mode", a.mode)
				a.command(a.restartCommand(old, paths))
			}
		}
	}
}

// wantRoots are the roots the adapter's server may see in snap, as its
// client holds them: for a wired server, whose client's roots are never
// handed to the SDK, the list shared by every server that sees the same
// (Manager.encode).
func (a *adapter) wantRoots(snap *app.Snapshot) []*sdk.Root {
	visible := app.VisibleView(snap, a.cfg.Name)
	if a.wired() {
		return a.m.encode(visible).sdk
	}
	want := make([]*sdk.Root, 0, len(visible))
	for _, r := range visible {
		want = append(want, &sdk.Root{URI: r.URI(), Name: r.Name})
	}
	return want
}

// setClientRoots replaces the client's roots have by want so that the SDK
// sends exactly one notifications/roots/list_changed to the connected server
// (a stdio server is told on its connection instead: tellRootsChanged).
func (a *adapter) setClientRoots(have, want []*sdk.Root) {
	if a.wired() {
		a.tellRootsChanged()
		return
	}
	keep := map[string]bool{}
	for _, r := range want {
		keep[r.URI] = true
	}
	var stale []string
	for _, r := range have {
		if !keep[r.URI] {
			stale = append(stale, r.URI)
		}
	}
	if len(want) == 0 {
		a.client.RemoveRoots(stale...)
		return
	}
	// Removing notifies when something was removed, adding always
	// notifies: hold back the first.
	a.quiet.Store(true)
	a.client.RemoveRoots(stale...)
	a.quiet.Store(false)
	a.client.AddRoots(want...)
}

// notifyAgain sends the server a fresh notifications/roots/list_changed
// although its roots have not changed since the last one: its roots/list
// after that one was refused. The SDK notifies on every AddRoots; an empty
// list is told by adding a placeholder quietly and removing it.
func (a *adapter) notifyAgain(have []*sdk.Root) {
	if a.currentSession() == nil {
		return // a server that connects asks anew
	}
	if a.wired() {
		a.tellRootsChanged()
		return
	}
	if len(have) > 0 {
		a.client.AddRoots(have...)
		return
	}
	const placeholder = "file:///.rootkeeper-roots-changed"
	a.quiet.Store(true)
	a.client.AddRoots(&sdk.Root{URI: placeholder})
	a.quiet.Store(false)
	a.client.RemoveRoots(placeholder)
}

// wired reports whether the adapter's server is a stdio server of its own
// (not a test's transport), whose list_changed notifications are written on
// its connection rather than sent through the SDK's client (whose roots,
// which only served to make it send them, it then leaves alone: roots/list
// is answered from the snapshot, receivingMiddleware and answerWire).
func (a *adapter) wired() bool {
	return a.cfg.Type == app.TransportStdio && a.m.opts.NewTransport == nil
}

// tellRootsChanged sends the current session of a wired server
// notifications/roots/list_changed on its connection, as the SDK would have
// (sendingMiddleware: only a session that has connected is told, and the
// roots/list it asks for in return is let through unmetered). A server
// not connected now is not told: it asks anew once it connects.
func (a *adapter) tellRootsChanged() {
	a.mu.Lock()
	var conn *stdioConn
	if a.sess != nil && a.proc != nil {
		conn = a.proc.conn.Load()
	}
	a.mu.Unlock()
	if conn == nil {
		return
	}
	a.noteAsked()
	if err := conn.notifyRootsChanged(); err != nil {
		// As the SDK logs a notification it could not send.
		a.m.log.Warn(fmt.Sprintf("calling %s: %v", methodRootsListChanged, err), "server", a.cfg.Name)
	}
}

func sameRoots(a, b []*sdk.Root) bool {
	return slices.EqualFunc(a, b, func(x, y *sdk.Root) bool { return x.URI == y.URI && x.Name == y.Name })
}
