package gui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"

	"rootkeeper/app"
)

// trayActions are what the tray menu's items do. Each runs on the UI
// goroutine.
type trayActions struct {
	// ToggleRoot is called with the root's path and the check mark it
	// should get.
	ToggleRoot func(path string, on bool)
	SetPaused  func(paused bool)
	ShowServer func(name string)
	Open       func()
	Quit       func()
}

// trayMenu is the tray menu for snap: a header, one checkable item per root
// (ticked = enabled and shared with at least one server), Pause or Resume,
// one line per server with its status, Open Rootkeeper and Quit. It is a
// pure function of the snapshot: the tray is rebuilt whole on every change.
func trayMenu(snap *app.Snapshot, act trayActions) *fyne.Menu {
	var items []*fyne.MenuItem
	paused := snap.State.Paused
	shared := 0
	for _, r := range snap.State.Roots {
		if len(app.SharedWith(snap, r.Path)) > 0 {
			shared++
		}
	}
	header := fyne.NewMenuItem(trayHeader(snap, shared), nil)
	header.Disabled = true
	items = append(items, header)
	for _, r := range snap.State.Roots {
		path := r.Path
		on := len(app.SharedWith(snap, path)) > 0
		it := fyne.NewMenuItem(rootItemLabel(snap, r), func() { act.ToggleRoot(path, !on) })
		it.Checked = on
		it.Disabled = paused
		items = append(items, it)
	}
	items = append(items, fyne.NewMenuItemSeparator())
	if paused {
		items = append(items, fyne.NewMenuItem("Resume sharing", func() { act.SetPaused(false) }))
	} else {
		items = append(items, fyne.NewMenuItem("Pause sharing", func() { act.SetPaused(true) }))
	}
	if len(snap.State.Servers) > 0 {
		items = append(items, fyne.NewMenuItemSeparator())
		for _, srv := range snap.State.Servers {
			name := srv.Name
			items = append(items, fyne.NewMenuItem(name+": "+serverStateText(snap, name), func() { act.ShowServer(name) }))
		}
	}
	quit := fyne.NewMenuItem("Quit", act.Quit)
	quit.IsQuit = true
	items = append(items, fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Open Rootkeeper", act.Open),
		quit)
	return fyne.NewMenu("Rootkeeper", items...)
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
		return app.SafeText(r.Name) + " (" + healthText(h) + ")"
	}
	return app.SafeText(r.Name)
}

// serverStateText is a server's live status in a few words.
func serverStateText(snap *app.Snapshot, name string) string {
	st, ok := snap.Servers[name]
	if !ok || st.State == "" {
		return "not running"
	}
	s := string(st.State)
	if st.State == app.ServerFailed && st.Error != "" {
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
