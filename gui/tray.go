package gui

import (
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"

	"rootkeeper/app"
	"rootkeeper/app/hosts"
	"rootkeeper/app/words"
)

// trayActions are what the tray menu's items do. Each runs on the UI
// goroutine.
type trayActions struct {
	// ToggleRoot is called with the root's path and the check mark it
	// should get.
	ToggleRoot func(path string, on bool)
	SetPaused  func(paused bool)
	ShowServer func(name string)
	// ShowRoots opens the window on every folder.
	ShowRoots func()
	// ShowRequest opens the window on the request of server for the
	// folder at path, to be answered.
	ShowRequest func(server, path string)
	Open        func()
	Quit        func()
	// Home writes the paths of the tray's lines as ~/….
	Home string
	// Finding, when not empty, is a line about the scan at start
	// ("Looking for your projects…", "3 projects found"); clicking it
	// calls ShowFound. It is not the snapshot's: the window's finder
	// (found.go) words it, and says when it changes.
	Finding   string
	ShowFound func()
}

// Bounds of the tray menu: it stays short at any scale (≤ 40 items).
const (
	trayMaxServers  = 8  // one line each up to this many; past it, a summary
	trayMaxRoots    = 15 // the most recently used folders
	trayMaxRequests = 3  // folders confined servers tried, newest first; past it, a count
)

// trayMenu is the tray menu for a snapshot, from its grid (built once per
// snapshot and shared with the window): a header, Pause or Resume, the
// folders confined servers tried that wait for an answer (three, newest
// first), one status line per server (a summary and the ones in trouble
// past eight), the fifteen most recently used folders (ticked = some
// server sees it), All folders…, Open Rootkeeper and Quit. It is a pure
// function of the snapshot: the tray is rebuilt whole on every change.
func trayMenu(g *app.Grid, act trayActions) *fyne.Menu {
	snap := g.Snapshot()
	var items []*fyne.MenuItem
	paused := snap.State.Paused
	shared := 0
	for _, r := range snap.State.Roots {
		if len(g.SeenBy(r.Path)) > 0 {
			shared++
		}
	}
	header := fyne.NewMenuItem(trayHeader(snap, shared), nil)
	header.Disabled = true
	items = append(items, header)
	if act.Finding != "" {
		items = append(items, fyne.NewMenuItem(act.Finding, act.ShowFound))
	}
	if paused {
		items = append(items, fyne.NewMenuItem("Resume sharing", func() { act.SetPaused(false) }))
	} else {
		items = append(items, fyne.NewMenuItem("Pause sharing", func() { act.SetPaused(true) }))
	}
	if reach := requestItems(snap, act); len(reach) > 0 {
		items = append(items, fyne.NewMenuItemSeparator())
		items = append(items, reach...)
	}
	if len(snap.State.Servers) > 0 {
		items = append(items, fyne.NewMenuItemSeparator())
		items = append(items, serverItems(snap, act)...)
	}
	if len(snap.State.Roots) > 0 {
		items = append(items, fyne.NewMenuItemSeparator())
		for _, r := range app.RecentRoots(snap, trayMaxRoots) {
			path := r.Path
			on := len(g.SeenBy(path)) > 0
			it := fyne.NewMenuItem(rootItemLabel(snap, r), func() { act.ToggleRoot(path, !on) })
			it.Checked = on
			it.Disabled = paused
			items = append(items, it)
		}
		items = append(items, fyne.NewMenuItem("All folders…", act.ShowRoots))
	}
	quit := fyne.NewMenuItem("Quit", act.Quit)
	quit.IsQuit = true
	items = append(items, fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Open Rootkeeper", act.Open),
		quit)
	return fyne.NewMenu("Rootkeeper", items...)
}

// requestItems are the folders confined servers tried to reach that wait
// for the person, newest first, one line each (clicking it opens the
// window on it), up to trayMaxRequests; past it, a line that counts the
// rest and opens the window.
func requestItems(snap *app.Snapshot, act trayActions) []*fyne.MenuItem {
	var reach []app.Request
	for _, r := range snap.State.Requests {
		if r.From == app.FromReach || r.From == app.FromNetwork {
			reach = append(reach, r)
		}
	}
	slices.SortStableFunc(reach, func(a, b app.Request) int { return b.Last.Compare(a.Last) })
	var out []*fyne.MenuItem
	for i, r := range reach {
		if i == trayMaxRequests {
			out = append(out, fyne.NewMenuItem(fmt.Sprintf("%d more waiting for your answer…", len(reach)-i), act.Open))
			break
		}
		server, path := r.Server, r.Path
		out = append(out, fyne.NewMenuItem(firstLine(app.RequestTextFor(r, act.Home, hosts.DisplayName)),
			func() { act.ShowRequest(server, path) }))
	}
	return out
}

// serverItems is one line per server, or past trayMaxServers a summary
// line and the servers that are not connected (at most trayMaxServers-1).
func serverItems(snap *app.Snapshot, act trayActions) []*fyne.MenuItem {
	line := func(name string) *fyne.MenuItem {
		return fyne.NewMenuItem(words.SafeText(name)+": "+serverStateText(snap, name, act.Home), func() { act.ShowServer(name) })
	}
	var out []*fyne.MenuItem
	if len(snap.State.Servers) <= trayMaxServers {
		for _, srv := range snap.State.Servers {
			out = append(out, line(srv.Name))
		}
		return out
	}
	counts := map[string]int{}
	var trouble []string
	for _, srv := range snap.State.Servers {
		st := serverStateWord(snap, srv.Name)
		counts[st]++
		if st != string(app.ServerConnected) {
			trouble = append(trouble, srv.Name)
		}
	}
	var parts []string
	for _, st := range []string{string(app.ServerConnected), string(app.ServerStarting), string(app.ServerHeld), string(app.ServerFailed), string(app.ServerStopped), "not running"} {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	out = append(out, fyne.NewMenuItem(fmt.Sprintf("%d servers: %s", len(snap.State.Servers), strings.Join(parts, ", ")),
		func() { act.ShowServer("") }))
	for i, name := range trouble {
		if i == trayMaxServers-1 {
			break
		}
		out = append(out, line(name))
	}
	return out
}

// serverStateWord is a server's state in one word ("not running" when it
// has none).
func serverStateWord(snap *app.Snapshot, name string) string {
	st, ok := snap.Servers[name]
	if !ok || st.State == "" {
		return "not running"
	}
	return string(st.State)
}

func trayHeader(snap *app.Snapshot, shared int) string {
	switch {
	case snap.State.Paused:
		return "Sharing paused"
	case len(snap.State.Roots) == 0:
		return "No folders yet"
	}
	return fmt.Sprintf("Sharing %d of %s", shared, plural(len(snap.State.Roots), "folder"))
}

// rootItemLabel is a root's name, with its health when a check failed.
func rootItemLabel(snap *app.Snapshot, r app.Root) string {
	if h := snap.Health[r.Path]; h.Status != app.HealthUnknown && !h.OK() {
		return words.SafeText(r.Name) + " (" + healthText(h) + ")"
	}
	return words.SafeText(r.Name)
}

// serverStateText is a server's live status in a few words.
func serverStateText(snap *app.Snapshot, name, home string) string {
	// A held server says what it waits for, running app or not.
	if h := app.HoldOf(snap, name); h != nil {
		return "held, " + h.Short(home)
	}
	st, ok := snap.Servers[name]
	if !ok || st.State == "" {
		return "not running"
	}
	s := string(st.State)
	// A failed server says why, and so does one stopped as hostile.
	if (st.State == app.ServerFailed || st.State == app.ServerStopped) && st.Error != "" {
		s += " (" + firstLine(st.Error) + ")"
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 80 {
		s = s[:77] + "…"
	}
	return s
}

// menuKey is a menu's visible content, to skip rebuilding an unchanged tray.
func menuKey(m *fyne.Menu) string {
	var b strings.Builder
	for _, it := range m.Items {
		fmt.Fprintf(&b, "%s|%t|%t|%t\n", it.Label, it.Checked, it.Disabled, it.IsSeparator)
	}
	return b.String()
}
