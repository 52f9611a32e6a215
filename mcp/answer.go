package mcp

import (
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
	"rootkeeper/app/audit"
)

// RootsAnswer is the one answer to a server's roots request, for the managed
// clients and the bridge alike: the roots server may see in snap, or the
// JSON-RPC error to send instead (-32601 for a server that may not have
// roots, -32603 when they cannot be computed). It never returns a partial
// list. visible is the rule to apply (app.Visible, or app.VisibleFor with a
// bridged session's host folders).
func RootsAnswer(snap *app.Snapshot, server string, visible func(*app.Snapshot, string) []app.Root) (roots []app.Root, err *jsonrpc.Error) {
	defer func() {
		if r := recover(); r != nil {
			roots, err = nil, errRootsUnavailable(fmt.Sprint("computing the visible roots failed: ", r))
		}
	}()
	if snap == nil {
		return nil, errRootsUnavailable("no state")
	}
	srv, ok := snap.State.Server(server)
	if !ok {
		return nil, errRootsUnavailable(fmt.Sprintf("server %q is no longer configured", server))
	}
	if srv.Mode() != app.RootsProtocol {
		return nil, ErrRootsNotSupported()
	}
	return visible(snap, server), nil
}

// RootsResult is roots as a roots/list result.
func RootsResult(roots []app.Root) *sdk.ListRootsResult {
	out := &sdk.ListRootsResult{Roots: make([]*sdk.Root, len(roots))}
	for i, r := range roots {
		out.Roots[i] = &sdk.Root{URI: r.URI(), Name: r.Name}
	}
	return out
}

// AnswerEntry is the audit entry of an answer RootsAnswer gave server over
// protocol version, via roots/list or an input request.
func AnswerEntry(server, version, via string, roots []app.Root, err *jsonrpc.Error) audit.Entry {
	e := audit.Entry{Time: time.Now().UTC(), Server: server, ProtocolVersion: version, Via: via}
	if err != nil {
		e.Error = fmt.Sprintf("%d %s", err.Code, err.Message)
		return e
	}
	e.Roots = make([]string, len(roots))
	for i, r := range roots {
		e.Roots[i] = r.URI()
	}
	return e
}
