package gui

import (
	"context"
	"encoding/binary"
	"runtime"

	"fyne.io/systray"

	"rootkeeper/app"
	"rootkeeper/app/link"
	"rootkeeper/assets"
)

// TrayOptions is what RunTray needs.
type TrayOptions struct {
	// Core is the running app's hub (required).
	Core *app.Core
	// Show brings the window up on what it names (link.Hub's Show): the
	// window is a process of its own, started when it is asked for.
	Show func(link.Show)
	// Finding is the window's line about its scan, "" for none
	// (link.Hub's Finding).
	Finding func() string
	// Changed signals that Finding changed (link.Hub's OnChange sends on
	// it); nil when it never does.
	Changed <-chan struct{}
	// Quit quits the app (Quit in the tray).
	Quit func()
	// Home writes the tray's paths as ~/….
	Home string
}

// RunTray shows the tray icon and keeps its menu a function of the core's
// snapshot until ctx ends. It is the whole GUI of the always-on process:
// no window and no toolkit render loop (fyne.io/systray speaks the
// StatusNotifierItem and dbusmenu protocols over D-Bus on Linux, and the
// native status item elsewhere), so that with the window closed the app
// costs what headless costs. A left click opens the window.
//
// Call it on the main goroutine: Windows and macOS run the tray's message
// loop there.
func RunTray(ctx context.Context, opts TrayOptions) {
	t := &tray{opts: opts}
	systray.Run(func() { go t.loop(ctx) }, nil)
}

// tray renders snapshots into the system tray.
type tray struct {
	opts TrayOptions
	// key is the menu on show (menuKey), paused which icon is.
	key    string
	paused *bool
}

// loop renders every change until ctx ends, then takes the icon away.
func (t *tray) loop(ctx context.Context) {
	systray.SetTitle("Rootkeeper")
	systray.SetTooltip("Rootkeeper")
	systray.SetOnTapped(func() { t.opts.Show(link.Show{}) })
	changed, unsubscribe := t.opts.Core.Subscribe()
	defer unsubscribe()
	for {
		t.render(t.opts.Core.Snapshot())
		select {
		case <-ctx.Done():
			systray.Quit()
			return
		case <-changed:
		case <-t.opts.Changed:
		}
	}
}

// render rebuilds the tray menu whole from snap when what it shows changed.
func (t *tray) render(snap *app.Snapshot) {
	if t.paused == nil || *t.paused != snap.State.Paused {
		p := snap.State.Paused
		t.paused = &p
		icon := assets.Tray
		if p {
			icon = assets.TrayPaused
		}
		systray.SetIcon(osIcon(icon.Content()))
	}
	m := trayMenu(app.NewGrid(snap), t.actions())
	k := menuKey(m)
	if k == t.key {
		return
	}
	t.key = k
	systray.ResetMenu() // closes the old items' click channels
	for _, it := range m.Items {
		if it.IsSeparator {
			systray.AddSeparator()
			continue
		}
		var item *systray.MenuItem
		if it.Checked {
			item = systray.AddMenuItemCheckbox(it.Label, "", true)
		} else {
			item = systray.AddMenuItem(it.Label, "")
		}
		if it.Disabled {
			item.Disable()
		}
		if act := it.Action; act != nil {
			go func() {
				for range item.ClickedCh {
					act()
				}
			}()
		}
	}
}

// actions are what the tray's items do in the always-on process: toggles
// and pause write through the core; everything else opens the window.
func (t *tray) actions() trayActions {
	core := t.opts.Core
	update := func(fn func(*app.State) error) {
		if err := core.Update(fn); err != nil {
			core.SetNotice("tray", "the tray's change was not saved: "+err.Error())
		} else {
			core.SetNotice("tray", "")
		}
	}
	finding := ""
	if t.opts.Finding != nil {
		finding = t.opts.Finding()
	}
	return trayActions{
		ToggleRoot: func(path string, on bool) {
			if !on {
				update(func(s *app.State) error { return s.SetEnabled(path, false) })
				return
			}
			// Ticking a folder some server was never asked about asks
			// first, in the window; nothing is exposed before.
			plan, ok := app.PlanTurnOn(core.Snapshot(), path)
			switch {
			case !ok:
			case len(plan.Ask) > 0:
				t.opts.Show(link.Show{Share: path})
			case plan.Enable:
				update(func(s *app.State) error { return s.SetEnabled(path, true) })
			}
		},
		SetPaused: func(paused bool) {
			update(func(s *app.State) error { s.SetPaused(paused); return nil })
		},
		ShowServer: func(string) { t.opts.Show(link.Show{Tab: "Servers"}) },
		ShowRoots:  func() { t.opts.Show(link.Show{Tab: "Roots"}) },
		ShowRequest: func(server, path string) {
			t.opts.Show(link.Show{Server: server, Request: path})
		},
		Open:      func() { t.opts.Show(link.Show{}) },
		Quit:      t.opts.Quit,
		Home:      t.opts.Home,
		Finding:   finding,
		ShowFound: func() { t.opts.Show(link.Show{Tab: "Roots"}) },
	}
}

// osIcon is a PNG as the tray wants it: as is on Linux and macOS, wrapped
// in an ICO container on Windows (whose ICO may hold a PNG).
func osIcon(png []byte) []byte {
	if runtime.GOOS != "windows" {
		return png
	}
	const header, entry = 6, 16
	b := make([]byte, header+entry, header+entry+len(png))
	binary.LittleEndian.PutUint16(b[2:], 1) // type: icon
	binary.LittleEndian.PutUint16(b[4:], 1) // one image
	// Width and height 0 mean 256 (the PNG says its own size).
	binary.LittleEndian.PutUint16(b[header+4:], 1)  // colour planes
	binary.LittleEndian.PutUint16(b[header+6:], 32) // bits per pixel
	binary.LittleEndian.PutUint32(b[header+8:], uint32(len(png)))
	binary.LittleEndian.PutUint32(b[header+12:], header+entry)
	return append(b, png...)
}
