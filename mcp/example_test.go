package mcp_test

import (
	"encoding/json"
	"fmt"

	"rootkeeper/app"
	"rootkeeper/mcp"
)

// The answer to a server's roots/list, as every managed client and bridge
// gives it: the one rule's roots, percent-encoded, and nothing undecided.
func ExampleRootsAnswer() {
	st := app.State{}
	st.AddServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: "mcp-server-filesystem"})
	st.AddRoot(app.Root{Path: "/home/ada/my project #1", Enabled: true})
	st.AddRoot(app.Root{Path: "/home/ada/secret", Enabled: true})
	st.Decide(app.Decision{Server: "fs", Root: "/home/ada/my project #1", Verdict: app.Allow})
	snap := &app.Snapshot{State: st, Health: map[string]app.Health{
		"/home/ada/my project #1": {Status: app.HealthOK}, "/home/ada/secret": {Status: app.HealthOK}}}
	roots, rpcErr := mcp.RootsAnswer(snap, "fs", app.Visible)
	data, _ := json.Marshal(mcp.RootsResult(roots))
	fmt.Println(string(data), rpcErr == nil)
	_, rpcErr = mcp.RootsAnswer(snap, "gone", app.Visible)
	fmt.Println(rpcErr.Code, rpcErr.Message)
	// Output:
	// {"roots":[{"name":"my project #1","uri":"file:///home/ada/my%20project%20%231"}]} true
	// -32603 Internal error: roots unavailable
}
