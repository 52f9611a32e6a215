package app_test

import (
	"fmt"

	"rootkeeper/app"
)

// The one rule: a server sees a root only when it is enabled, passed its
// access check, is allowed to that server, and sharing is not paused.
func ExampleVisible() {
	st := app.State{}
	st.AddServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: "mcp-server-filesystem"})
	for _, p := range []string{"/home/ada/src/api", "/home/ada/src/web", "/home/ada/notes"} {
		st.AddRoot(app.Root{Path: p, Enabled: true})
	}
	st.Decide(app.Decision{Server: "fs", Root: "/home/ada/src/api", Verdict: app.Allow})
	st.Decide(app.Decision{Server: "fs", Root: "/home/ada/src/web", Verdict: app.Allow})
	st.Decide(app.Decision{Server: "fs", Root: "/home/ada/notes", Verdict: app.Deny})
	snap := &app.Snapshot{State: st, Health: map[string]app.Health{
		"/home/ada/src/api": {Status: app.HealthOK},
		"/home/ada/src/web": {Status: app.HealthMissing}, // deleted since: withdrawn
		"/home/ada/notes":   {Status: app.HealthOK},
	}}
	for _, r := range app.Visible(snap, "fs") {
		fmt.Println(r.URI())
	}
	snap.State.Paused = true
	fmt.Println(len(app.Visible(snap, "fs")), "while paused")
	// Output:
	// file:///home/ada/src/api
	// 0 while paused
}

// A folder a server's configuration names is a slot: kept where it is,
// and the server is held until the person allows it.
func ExampleHoldOf() {
	st := app.State{Servers: []app.Server{{Name: "git", Type: app.TransportStdio, Command: "git-mcp-server",
		Env:   map[string]string{"GIT_BASE_DIR": "/home/ada/work"},
		Slots: []app.Slot{{Path: "/home/ada/work", Given: "/home/ada/work", Arg: -1, Env: "GIT_BASE_DIR"}}}}}
	snap := &app.Snapshot{State: st}
	fmt.Println(app.HoldOf(snap, "git").Text("/home/ada"))
	st.AddRoot(app.Root{Path: "/home/ada/work", Enabled: true})
	st.Decide(app.Decision{Server: "git", Root: "/home/ada/work", Verdict: app.Allow})
	fmt.Println(app.HoldOf(&app.Snapshot{State: st}, "git") == nil)
	// Output:
	// waiting for your decision on ~/work (rootkeeper grant git ~/work)
	// true
}
