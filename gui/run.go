package gui

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"rootkeeper/app"
	"rootkeeper/app/link"
	"rootkeeper/assets"
)

// AppID is the Fyne application ID (also in FyneApp.toml).
const AppID = "io.rootkeeper.app"

// Options is what Run needs. Nil optional fields switch a feature off.
type Options struct {
	// Core is the window's hub (required): its state is the state file's,
	// its live view the running app's (package link mirrors it).
	Core *app.Core
	// Scan finds candidates for the Discover tab; nil says scanning is
	// unavailable.
	Scan app.Scanner
	// Servers restarts servers and reads their stderr; nil disables Log
	// and Restart.
	Servers app.ServerController
	// Health checks a folder's access again now (the running app's health
	// monitor, through package link): the Roots tab's "Check again" on a
	// folder that failed its check. Nil hides the button.
	Health app.HealthChecker
	// Resources lists and reads the servers' resources for the Resources…
	// button of each connected server; nil hides the button. If it is also
	// an app.ResourceWatcher, the open dialog follows the server's changes.
	Resources app.ResourceBrowser
	// StateDir holds the audit log shown in the Activity tab.
	StateDir string
	// Home is the person's home folder, for the risk warnings.
	Home string
	// SetReviewer, when set, is given the GUI's sampling reviewer once the
	// window is up, and nil again when it closes. Nil: sampling requests
	// are not reviewed here.
	SetReviewer func(app.SamplingReviewer)
	// Started, when set, is called once the window has drawn its first
	// snapshot and the reviewer is in place.
	Started func()
	// Context, when it ends, closes the window (main passes the context
	// its signal handler cancels and the link's end cancels). Nil means
	// never.
	Context context.Context
	// Landlock reports the Landlock ABI a confined server runs under here,
	// or why servers cannot be confined (main passes confine.ABI, which gui
	// may not import). Nil: this build cannot confine, and the Confine
	// switch of each card can only be turned off.
	Landlock func() (int, error)
	// LandlockKernel reports this kernel's own Landlock ABI, whatever caps
	// the one servers run under (main passes confine.KernelABI): a card
	// whose ABI is below it says it is capped. Nil: unknown.
	LandlockKernel func() (int, error)
	// Isolation reports whether confined servers get a network of their
	// own here, and why not (main passes confine.Isolation): where they do
	// not, a card says its network is bounded for TCP connects only and
	// shows no names. Nil: they do not.
	Isolation func() (bool, string)
	// Shows are what the running app asks the window to show: the window
	// comes forward for each (the tray's Open, a second launch, a folder
	// ticked in the tray that a server was not asked about).
	Shows <-chan link.Show
	// Later is what the person put off with Later in earlier windows:
	// not asked again at once. (What an earlier window was asking when it
	// ended is not in it: this window asks it again.)
	Later app.Later
	// OnLater, when set, is told what the person has put off in this
	// window, the whole of it, each time it changes (the running app
	// hands it to the next window: link.Window's SetLater). It must not
	// block: it is called on the UI goroutine.
	OnLater func(app.Later)
	// OnFinding, when set, is told the tray's line about the scan at start
	// each time it changes (the tray is the running app's).
	OnFinding func(string)
	// QuitApp, when set, quits Rootkeeper (the menu's Quit); closing the
	// window only closes the window.
	QuitApp func()
	// Log, when set, is told how long after Began the window was first
	// drawn and each kind of dialog first shown: the window's own measure
	// of how quickly it answers the tray and a server waiting for the
	// person.
	Log   *slog.Logger
	Began time.Time
}

// Run opens the main window and blocks until it is closed. The window is
// a process of its own, started by the running app when the person opens
// it or something needs them, and gone when closed (package link); the
// tray is the running app's (RunTray).
//
// For screenshots (docs/screenshots.sh), the environment variable
// ROOTKEEPER_SHOW_TAB selects the tab shown first (roots, discover, servers,
// activity; discover also starts a scan), and ROOTKEEPER_SHOW_SHARE=PATH
// opens the share dialog for PATH at start.
func Run(opts Options) error {
	if opts.Core == nil {
		return errors.New("gui: no core")
	}
	u := newWindow(opts)
	ctx, cancel := closedWith(opts.Context, u.fa)
	defer cancel()

	// Subscribe before the first render, so that no change falls between.
	changed, unsubscribe := opts.Core.Subscribe()
	defer unsubscribe()
	kick := make(chan struct{}, 1)
	// Reviews still waiting when the window goes are rejected.
	quitReviews := make(chan struct{})
	reviewer := &samplingReviewer{u: u, quit: quitReviews}
	u.fa.Lifecycle().SetOnStarted(func() { u.started(ctx, changed, kick, reviewer) })
	u.win.Show()
	u.fa.Run()
	if opts.SetReviewer != nil {
		opts.SetReviewer(nil)
	}
	close(quitReviews)
	return nil
}

// newWindow makes the Fyne app and its main window, not yet shown: its
// tabs, size, settings menu, and what closing it does (it quits this
// process, the window's own).
func newWindow(opts Options) *ui {
	fa := fyneapp.NewWithID(AppID)
	fa.SetIcon(assets.Icon)
	win := fa.NewWindow("Rootkeeper")
	win.SetIcon(assets.Icon)
	u := newUI(fa, win, opts)
	win.SetContent(u.build())
	win.Resize(fyne.NewSize(980, 680))
	u.settings = newSettings(u)
	win.SetMainMenu(u.settings.menu)
	win.SetCloseIntercept(fa.Quit)
	if opts.OnFinding != nil {
		u.onRefresh = func(*app.Snapshot) { opts.OnFinding(u.findingLine()) }
	}
	return u
}

// closedWith is the window's context: it ends with cancel (when Run
// returns) or with parent (nil: never), and parent's end quits fa, which
// closes the window.
func closedWith(parent context.Context, fa fyne.App) (context.Context, context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	go func() {
		<-ctx.Done()
		if parent.Err() != nil {
			fyne.Do(fa.Quit)
		}
	}()
	return ctx, cancel
}

// started is what the window does once Fyne runs, on the UI goroutine:
// it shows what it was brought up to show (the tray's line about a
// request, which comes before what would be asked first), draws the first
// snapshot, loads the settings, offers once to protect the hosts' servers,
// starts finding projects, then follows the core's changes (changed, kick)
// and the running app's requests until ctx ends, and hands out reviewer.
func (u *ui) started(ctx context.Context, changed, kick <-chan struct{}, reviewer *samplingReviewer) {
	opts := u.opts
	if opts.Shows != nil {
		select {
		case s := <-opts.Shows:
			u.show(s)
		default:
		}
	}
	u.refresh()
	u.onScreen("window")
	u.settings.load()
	u.guideHosts()   // once: offer to protect the hosts' servers
	u.startFinding() // projects found without a click (found.go)
	u.showForScreenshots()
	go u.loop(ctx, changed, kick)
	if opts.Shows != nil {
		go u.followShows(ctx, opts.Shows)
	}
	if opts.SetReviewer != nil {
		opts.SetReviewer(reviewer)
	}
	if opts.Started != nil {
		opts.Started()
	}
}

// showForScreenshots shows what docs/screenshots.sh asks for (see Run):
// the tab ROOTKEEPER_SHOW_TAB names (discover also starts a scan), the
// share dialog of the folder ROOTKEEPER_SHOW_SHARE names.
func (u *ui) showForScreenshots() {
	if tab := os.Getenv("ROOTKEEPER_SHOW_TAB"); tab != "" {
		u.selectTab(tab)
		if strings.EqualFold(tab, "discover") {
			u.discover.scan()
		}
	}
	if p := strings.TrimSpace(os.Getenv("ROOTKEEPER_SHOW_SHARE")); p != "" {
		u.shareFolder(p, app.SourcePicked, "", "")
	}
}

// followShows shows, until ctx ends, each thing the running app asks the
// window to show.
func (u *ui) followShows(ctx context.Context, shows <-chan link.Show) {
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-shows:
			fyne.Do(func() { u.show(s) })
		}
	}
}

// onScreen logs, once per kind of thing in this window's life, how long
// after the process began it first came on screen (the next turn of the
// UI loop, once what was just laid out is drawn).
func (u *ui) onScreen(what string) {
	if u.opts.Log == nil || u.shown[what] {
		return
	}
	if u.shown == nil {
		u.shown = map[string]bool{}
	}
	u.shown[what] = true
	u.do(func() {
		u.opts.Log.Info(what+" on screen", "after", time.Since(u.opts.Began).Round(time.Millisecond))
	})
}

// show brings the window forward on what s names.
func (u *ui) show(s link.Show) {
	u.raise()
	if s.Tab != "" {
		u.selectTab(s.Tab)
	}
	if s.Share != "" {
		u.selectTab("Roots")
		u.turnOn(s.Share)
	}
	if s.Request != "" {
		u.answerRequest(s.Server, s.Request)
	}
}
