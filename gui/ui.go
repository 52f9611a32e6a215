package gui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/hosts"
)

// ui is the controller of the window, its tabs and the consent dialogs. Its
// fields are touched only on the UI goroutine (inside u.do).
type ui struct {
	opts Options
	fa   fyne.App
	win  fyne.Window
	core *app.Core

	// async runs slow work (disk, subprocesses) off the UI goroutine; do
	// brings its result back onto it. In the app they are `go f()` and
	// fyne.Do; tests run both inline so that everything stays on one
	// goroutine.
	async func(func())
	do    func(func())
	// inspect runs the access checks and risk warnings a consent dialog
	// shows (it reads the disk; async calls it).
	inspect func(roots []app.Root, home string) []rootInfo
	// notify sends a desktop notification.
	notify func(title, body string)
	// after runs f on the UI goroutine once d has passed; now is the
	// clock (what waits, and until when).
	after func(d time.Duration, f func())
	now   func() time.Time
	// showWindow brings the window up (and notes that it is visible).
	showWindow func()
	// onRefresh is told about every rendered snapshot (the tray hooks in).
	onRefresh func(*app.Snapshot)
	// hostsOptions says where the Hosts tab finds the hosts' files and
	// what their entries are to run (tests point it at a home of theirs).
	hostsOptions func() hosts.Options
	// landlock is opts.Landlock asked once (the kernel's answer does not
	// change while the app runs), never nil.
	landlock func() (int, error)
	// landlockKernel is opts.LandlockKernel asked once; nil when unknown.
	landlockKernel func() (int, error)

	snap *app.Snapshot
	grid *app.Grid // snap's index, built once per snapshot
	// bannerKey is what the banner shows, to skip rebuilding it unchanged;
	// requestLine is its line's Answer… button (tests).
	bannerKey   string
	requestLine *widget.Button

	tabs     *container.AppTabs
	banner   *fyne.Container
	content  *fyne.Container // the banner over the tabs
	roots    *rootsTab
	access   *accessTab
	discover *discoverTab
	servers  *serversTab
	activity *activityTab
	hosts    *hostsTab
	// settings is the menu bar with Start at login (set by Run).
	settings *settings

	// consent is the open consent dialog's key ("server:NAME",
	// "root:PATH", "review", "request:…"), "" when none is open.
	consent string
	// queue says what to ask next, and remembers what was put off or is
	// being answered (app.ConsentQueue: the window decides none of it).
	queue app.ConsentQueue
	// samplingOpen is the sampling dialog on screen (nil when none) and
	// samplingQueue those waiting behind it, oldest first.
	samplingOpen  samplingPrompt
	samplingQueue []samplingPrompt
	// settling: askNext is waiting for servers still starting (see
	// app.Grid.Settling) and will ask again.
	settling bool
	// find is the scan the Roots tab shows (found.go), nil before any;
	// finding is the tray's line about it last shown.
	find    *finder
	finding string
	// folderView is the open per-folder view of consent, nil when none.
	folderView *folderAccess
	// shown are the kinds of thing onScreen has logged.
	shown map[string]bool
	// openDialog is the consent dialog on screen (a *pendingDialog or a
	// *shareDialog), for tests.
	openDialog any
	// netIso is whether servers get a network of their own here, asked
	// once (servers_network.go).
	netIso *netIsolation
}

func newUI(fa fyne.App, win fyne.Window, opts Options) *ui {
	u := &ui{
		opts:  opts,
		fa:    fa,
		win:   win,
		core:  opts.Core,
		async: func(f func()) { go f() },
		do:    fyne.Do,
		notify: func(title, body string) {
			// A D-Bus call to the notification daemon: never on the UI
			// goroutine, where it held the dialog it announces.
			go fa.SendNotification(fyne.NewNotification(title, body))
		},
		inspect: inspect,
		now:     time.Now,
	}
	u.queue.SetLater(opts.Later)
	u.after = func(d time.Duration, f func()) { time.AfterFunc(d, func() { u.do(f) }) }
	u.showWindow = func() { u.win.Show(); u.win.RequestFocus() }
	u.onRefresh = func(*app.Snapshot) {}
	u.hostsOptions = func() hosts.Options {
		o := hostsOptions(u.core.Store())
		o.Update = u.core.Update // every write of the window through the core
		return o
	}
	u.landlock = sync.OnceValues(func() (int, error) {
		if opts.Landlock == nil {
			return 0, errors.New("cannot confine: this build of Rootkeeper has no Landlock support")
		}
		return opts.Landlock()
	})
	if opts.LandlockKernel != nil {
		u.landlockKernel = sync.OnceValues(opts.LandlockKernel)
	}
	return u
}

// build makes the window's content. Call once, on the UI goroutine.
func (u *ui) build() fyne.CanvasObject {
	u.roots = newRootsTab(u)
	u.access = newAccessTab(u)
	u.discover = newDiscoverTab(u)
	u.servers = newServersTab(u)
	u.activity = newActivityTab(u)
	u.hosts = newHostsTab(u)
	u.discover.onScan = u.showFinding
	u.discover.onDone = u.finishFinding
	u.tabs = container.NewAppTabs(
		container.NewTabItem("Roots", u.roots.content),
		container.NewTabItem("Access", u.access.content),
		container.NewTabItem("Discover", u.discover.content),
		container.NewTabItem("Servers", u.servers.content),
		container.NewTabItem("Activity", u.activity.content),
		container.NewTabItem("Hosts", u.hosts.content),
	)
	u.tabs.OnSelected = func(t *container.TabItem) {
		switch t.Text {
		case "Activity":
			u.activity.reload()
		case "Hosts":
			u.hosts.reload()
		}
	}
	u.banner = container.NewVBox()
	u.content = container.NewBorder(u.banner, nil, nil, nil, u.tabs)
	return u.content
}

// selectTab shows the tab called name (case-insensitive); unknown names are
// ignored.
func (u *ui) selectTab(name string) {
	for _, t := range u.tabs.Items {
		if strings.EqualFold(t.Text, name) {
			u.tabs.Select(t)
			return
		}
	}
}

// refresh renders the core's current snapshot everywhere, and opens the next
// consent dialog if a server is waiting for one. UI goroutine only.
func (u *ui) refresh() {
	snap := u.core.Snapshot()
	if u.snap == snap {
		u.askNext()
		return
	}
	u.snap = snap
	g := app.NewGrid(snap)
	u.grid = g
	u.renderBanner(snap)
	u.roots.render(snap, g)
	u.access.render(snap, g)
	if u.folderView != nil {
		u.folderView.render(snap, g)
	}
	u.discover.render(snap)
	u.servers.render(snap, g)
	u.activity.render(snap)
	u.onRefresh(snap)
	u.followRequest()
	u.askNext()
}

// loop re-renders after every signal on changed (the core's subscription)
// or kick, until ctx ends. It runs in its own goroutine.
func (u *ui) loop(ctx context.Context, changed, kick <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-kick:
		}
		u.do(u.refresh)
	}
}

// update applies fn to the state off the UI goroutine (core.Update writes
// and fsyncs the state file), then comes back to show a failure and
// re-render. then, if not nil, runs on the UI goroutine with the error.
func (u *ui) update(what string, fn func(*app.State) error, then func(error)) {
	u.async(func() {
		err := u.core.Update(fn)
		u.do(func() {
			if err != nil {
				u.showError(fmt.Errorf("%s: %w", what, err))
				u.snap = nil // render again: widgets may show what failed
			}
			if then != nil {
				then(err)
			}
			u.refresh()
		})
	})
}

// showError shows err in a dialog over the window.
func (u *ui) showError(err error) { showErrorOn(u.win, err) }

// showErrorOn shows err over win; Enter and Escape close it.
func showErrorOn(win fyne.Window, err error) {
	d := dialog.NewError(err, win)
	keyed(win, d, d.Hide, d.Hide)
	d.Show()
}

// renderBanner shows above the tabs what waits for the person (put-off
// questions, open requests), the paused state and the notices.
func (u *ui) renderBanner(snap *app.Snapshot) {
	waiting := u.queue.Waiting(u.grid)
	requests := app.RequestsByUrgency(snap.State.Requests, u.now())
	first := ""
	if len(requests) > 0 {
		first = app.RequestTextFor(requests[0], u.home(), hosts.DisplayName)
	}
	key := fmt.Sprint(snap.State.Paused, waiting, len(requests), first, snap.Notices)
	if key == u.bannerKey {
		return // unchanged: no new widgets
	}
	u.bannerKey = key
	u.banner.Objects = nil
	u.requestLine = nil
	if waiting > 0 {
		review := widget.NewButton("Review…", u.reviewNow)
		u.banner.Add(newBanner(fmt.Sprintf("%s waiting for your decision. Until you answer, nothing is shown.",
			plural(waiting, "folder question")), review))
	}
	if len(requests) > 0 {
		// What waits is never out of sight: put off, or left when an
		// earlier window ended, a request is one click away.
		r := requests[0]
		answer := widget.NewButton("Answer…", func() { u.answerRequest(r.Server, r.Path) })
		answer.Importance = widget.HighImportance
		what := plural(len(requests), "request") + " waiting for your answer: " + first
		if len(requests) > 1 {
			what = plural(len(requests), "request") + " waiting for your answer; the first: " + first
		}
		u.banner.Add(newBanner(what, answer))
		u.requestLine = answer
	}
	if snap.State.Paused {
		resume := widget.NewButton("Resume sharing", func() { u.setPaused(false) })
		u.banner.Add(newBanner("Sharing is paused: no server sees any folder.", resume))
	}
	for _, topic := range sortedKeys(snap.Notices) {
		u.banner.Add(newBanner(snap.Notices[topic], nil))
	}
	// Lay the tabs out again under the banner's new height.
	u.content.Refresh()
}

// setPaused pauses or resumes all sharing.
func (u *ui) setPaused(paused bool) {
	what := "pause sharing"
	if !paused {
		what = "resume sharing"
	}
	u.update(what, func(s *app.State) error { s.SetPaused(paused); return nil }, nil)
}

// home is the person's home folder, for risk warnings.
func (u *ui) home() string {
	if u.opts.Home != "" {
		return u.opts.Home
	}
	h, _ := os.UserHomeDir()
	return h
}
