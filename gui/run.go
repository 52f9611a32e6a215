package gui

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/driver/desktop"

	"rootkeeper/app"
	"rootkeeper/app/control"
	"rootkeeper/assets"
)

// AppID is the Fyne application ID (also in FyneApp.toml).
const AppID = "io.rootkeeper.app"

// Options is what Run needs. Nil optional fields switch a feature off.
type Options struct {
	// Core is the running app's hub (required).
	Core *app.Core
	// Scan finds candidates for the Discover tab; nil says scanning is
	// unavailable.
	Scan app.Scanner
	// Servers restarts servers and reads their stderr; nil disables Log
	// and Restart.
	Servers app.ServerController
	// Resources lists and reads the servers' resources for the Resources…
	// button of each connected server; nil hides the button. If it is also
	// an app.ResourceWatcher, the open dialog follows the server's changes.
	Resources app.ResourceBrowser
	// Control is the control socket; Run registers its "raise" op, which
	// shows and focuses the window.
	Control *control.Server
	// StateDir holds the audit log shown in the Activity tab.
	StateDir string
	// Home is the person's home folder, for the risk warnings.
	Home string
	// SetReviewer, when set, is given the GUI's sampling reviewer once the
	// window is up, and nil again when it closes (main passes the MCP
	// manager's SetReviewer). Nil: sampling requests are not reviewed here.
	SetReviewer func(app.SamplingReviewer)
	// Started, when set, is called once the window has drawn its first
	// snapshot and the reviewer is in place (main starts the MCP clients
	// then: a server asking for sampling right after its handshake finds
	// someone to review it, and twenty servers starting do not delay the
	// first frame).
	Started func()
	// Context, when it ends, quits the app as Quit in the tray does (main
	// passes the context its signal handler cancels). Nil means never.
	Context context.Context
	// Landlock reports the Landlock ABI a confined server runs under here,
	// or why servers cannot be confined (main passes confine.ABI, which gui
	// may not import). Nil: this build cannot confine, and the Confine
	// switch of each card can only be turned off.
	Landlock func() (int, error)
	// Hidden starts the app in the tray with the window closed (start at
	// login). Without a tray host the window opens anyway, so that no
	// invisible app is left running.
	Hidden bool
}

// Run opens the main window and the tray icon and blocks until the person
// quits. Closing the window hides it to the tray; without a tray host (no
// StatusNotifierWatcher on the session bus) closing the window quits, so
// that no invisible app is left behind.
//
// For screenshots (docs/screenshots.sh), the environment variable
// ROOTKEEPER_SHOW_TAB selects the tab shown first (roots, discover, servers,
// activity; discover also starts a scan), and ROOTKEEPER_SHOW_SHARE=PATH
// opens the share dialog for PATH at start.
func Run(opts Options) error {
	if opts.Core == nil {
		return errors.New("gui: no core")
	}
	fa := fyneapp.NewWithID(AppID)
	fa.SetIcon(assets.Icon)
	win := fa.NewWindow("Rootkeeper")
	win.SetIcon(assets.Icon)
	u := newUI(fa, win, opts)
	win.SetContent(u.build())
	win.Resize(fyne.NewSize(980, 680))
	u.settings = newSettings(u)
	win.SetMainMenu(u.settings.menu)

	parent := opts.Context
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	go func() {
		<-ctx.Done()
		if parent.Err() != nil {
			fyne.Do(fa.Quit)
		}
	}()

	tray := trayHostPresent()
	desk, isDesktop := fa.(desktop.App)
	if tray && isDesktop {
		t := &trayIcon{u: u, desk: desk}
		u.onRefresh = t.render
		// Fyne starts its tray only if it is set up before Run.
		t.render(opts.Core.Snapshot())
		win.SetCloseIntercept(func() {
			// The tray host may have gone since start: ask again, off the
			// UI goroutine, before hiding into it.
			go func() {
				still := trayHostPresent()
				fyne.Do(func() {
					if still {
						win.Hide()
					} else {
						fa.Quit()
					}
				})
			}()
		})
	} else {
		win.SetCloseIntercept(fa.Quit)
	}

	if opts.Control != nil {
		opts.Control.Handle("raise", func(context.Context, json.RawMessage) (any, error) {
			fyne.Do(u.raise)
			return "raised", nil
		})
	}

	// Subscribe before the first render, so that no change falls between.
	changed, unsubscribe := opts.Core.Subscribe()
	defer unsubscribe()
	kick := make(chan struct{}, 1)
	// Reviews still waiting when the window goes are rejected.
	quitReviews := make(chan struct{})
	reviewer := &samplingReviewer{u: u, quit: quitReviews}
	fa.Lifecycle().SetOnStarted(func() {
		u.refresh()
		u.settings.load()
		if !opts.Hidden {
			u.guideHosts() // once: offer to protect the hosts' servers
		}
		u.startFinding() // projects found without a click (found.go)
		if tab := os.Getenv("ROOTKEEPER_SHOW_TAB"); tab != "" {
			u.selectTab(tab)
			if strings.EqualFold(tab, "discover") {
				u.discover.scan()
			}
		}
		if p := strings.TrimSpace(os.Getenv("ROOTKEEPER_SHOW_SHARE")); p != "" {
			u.shareFolder(p, app.SourcePicked, "", "")
		}
		go u.loop(ctx, changed, kick)
		if opts.SetReviewer != nil {
			opts.SetReviewer(reviewer)
		}
		if opts.Started != nil {
			opts.Started()
		}
	})
	if !opts.Hidden || !tray || !isDesktop {
		win.Show()
	}
	fa.Run()
	if opts.SetReviewer != nil {
		opts.SetReviewer(nil)
	}
	close(quitReviews)
	return nil
}

// trayIcon keeps the tray's icon and menu in step with the snapshots the
// window renders.
type trayIcon struct {
	u      *ui
	desk   desktop.App
	key    string
	paused *bool
}

// render rebuilds the tray menu whole from snap when what it shows changed.
func (t *trayIcon) render(snap *app.Snapshot) {
	if t.paused == nil || *t.paused != snap.State.Paused {
		p := snap.State.Paused
		t.paused = &p
		if p {
			t.desk.SetSystemTrayIcon(assets.TrayPaused)
		} else {
			t.desk.SetSystemTrayIcon(assets.Tray)
		}
	}
	g := t.u.grid
	if g == nil || g.Snapshot() != snap {
		g = app.NewGrid(snap)
	}
	m := trayMenuOf(g, t.u.trayActions())
	if k := menuKey(m); k != t.key {
		t.key = k
		t.desk.SetSystemTrayMenu(m)
	}
}

// trayActions are what the tray's items do.
func (u *ui) trayActions() trayActions {
	return trayActions{
		ToggleRoot: func(path string, on bool) {
			if on {
				u.turnOn(path)
			} else {
				u.turnOff(path)
			}
		},
		SetPaused:  u.setPaused,
		ShowServer: func(string) { u.raise(); u.selectTab("Servers") },
		ShowRoots:  func() { u.raise(); u.selectTab("Roots") },
		Open:       u.raise,
		Quit:       u.fa.Quit,
		Home:       u.home(),
		Finding:    u.findingLine(),
		ShowFound:  func() { u.raise(); u.selectTab("Roots") },
	}
}
