package link

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/cli"
	"rootkeeper/app/control"
	"rootkeeper/app/health"
)

// rig is a running app (a core, its control socket and a hub) in a
// temporary state folder, whose Spawn starts a window in this process: a
// core of its own over the same state file, attached through the real
// socket.
type rig struct {
	t     *testing.T
	dir   string
	core  *app.Core
	hub   *Hub
	ctl   *control.Server
	stop  func()
	spawn atomic.Int32
	// crash makes the windows Spawn starts end before they attach; crashed
	// hears of each.
	crash   atomic.Bool
	crashed chan struct{}
	// windows receives each window the hub's Spawn brought up.
	windows chan *testWindow
	// servers records the Restart calls.
	servers *recorder
}

// testWindow is a window process's end, without the GUI.
type testWindow struct {
	*Window
	core   *app.Core
	cancel func()
	done   chan error
}

type recorder struct {
	mu       sync.Mutex
	restarts []string
}

func (r *recorder) Restart(name string) {
	r.mu.Lock()
	r.restarts = append(r.restarts, name)
	r.mu.Unlock()
}
func (r *recorder) Log(name string) string { return "stderr of " + name }

func newRig(t *testing.T, setup func(*app.State) error) *rig {
	t.Helper()
	dir := t.TempDir()
	store, err := app.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	core, err := app.NewCore(store)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		if err := core.Update(setup); err != nil {
			t.Fatal(err)
		}
	}
	ctl, err := control.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, dir: dir, core: core, ctl: ctl, windows: make(chan *testWindow, 4), crashed: make(chan struct{}, 4), servers: &recorder{}}
	r.hub = NewHub(core, Options{Spawn: r.spawnWindow, Servers: r.servers, AttachTimeout: 5 * time.Second})
	r.hub.Register(ctl)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); ctl.Serve(ctx) }()
	go func() { defer wg.Done(); r.hub.Run(ctx) }()
	r.stop = func() { cancel(); wg.Wait() }
	t.Cleanup(r.stop)
	return r
}

// spawnWindow is the hub's Spawn: a window attaches from a goroutine, as
// the window process would.
func (r *rig) spawnWindow() error {
	r.spawn.Add(1)
	if r.crash.Load() {
		// A window process that ends before it attaches.
		r.hub.WindowEnded(errors.New("exit status 2"))
		r.crashed <- struct{}{}
		return nil
	}
	go func() {
		w, err := r.attach()
		if err != nil {
			r.t.Errorf("a spawned window did not attach: %v", err)
			return
		}
		r.windows <- w
	}()
	return nil
}

// attach is a window process: its own core over the state file, linked.
func (r *rig) attach() (*testWindow, error) {
	store, err := app.OpenStore(r.dir)
	if err != nil {
		return nil, err
	}
	core, err := app.NewCore(store)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := Attach(ctx, r.dir, core)
	if err != nil {
		cancel()
		return nil, err
	}
	tw := &testWindow{Window: w, core: core, cancel: cancel, done: make(chan error, 1)}
	go func() { tw.done <- w.Run(ctx) }()
	r.t.Cleanup(func() { cancel(); <-tw.done })
	return tw, nil
}

// close closes the window as the person would: its process ends.
func (w *testWindow) close() {
	w.cancel()
	<-w.done
	w.done <- nil // for the cleanup
}

// detached waits until the hub has heard the window go (and put off what
// was on screen).
func (r *rig) detached() {
	r.t.Helper()
	apptest.Eventually(r.t, "the hub to hear the window go", func() (bool, string) { return !r.hub.Attached(), "" })
}

func (r *rig) window() *testWindow {
	r.t.Helper()
	select {
	case w := <-r.windows:
		return w
	case <-time.After(apptest.Patience):
		r.t.Fatal("no window was started (hung?)")
		return nil
	}
}

// noWindowNeeded makes the hub's decision whether to start a window (the
// one Run makes after each change), here and now, and fails the test if a
// window was started or is on its way: made in step with the test, a
// wrong decision cannot be merely late.
func (r *rig) noWindowNeeded(why string) {
	r.t.Helper()
	r.hub.askIfNeeded()
	r.hub.mu.Lock()
	starting, up := !r.hub.started.IsZero(), r.hub.win != nil
	r.hub.mu.Unlock()
	if starting || up {
		r.t.Fatalf("a window was started (on its way %v, up %v): %s", starting, up, why)
	}
}

func TestTheWindowMirrorsTheLiveView(t *testing.T) {
	r := newRig(t, func(s *app.State) error {
		return s.AddServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: "srv"})
	})
	r.core.SetServerStatus("fs", app.ServerStatus{State: app.ServerConnected, LastSent: []string{"file:///a"}})
	r.core.SetHealth("/a", app.Health{Status: app.HealthOK})
	r.core.SetNotice("loop:x", "the x stopped")
	r.core.SeenBridge(app.BridgeSession{ID: 7, Server: "fs", Host: "claude-code"})

	w, err := r.attach()
	if err != nil {
		t.Fatal(err)
	}
	// Attach returns with the live view in place: the first render is right.
	snap := w.core.Snapshot()
	if st := snap.Servers["fs"]; st.State != app.ServerConnected || len(st.LastSent) != 1 {
		t.Errorf("servers at attach: %+v", snap.Servers)
	}
	if !snap.Health["/a"].OK() || snap.Notices["loop:x"] == "" || snap.Bridges[7].Host != "claude-code" {
		t.Errorf("live view at attach: health %v notices %v bridges %v", snap.Health, snap.Notices, snap.Bridges)
	}
	// And it follows.
	r.core.SetServerStatus("fs", app.ServerStatus{State: app.ServerFailed, Error: "exit 1"})
	r.core.SetHealth("/a", app.Health{Status: app.HealthMissing})
	r.core.SetNotice("loop:x", "")
	apptest.Until(t, w.core, "the window sees the failure", func(s *app.Snapshot) bool {
		return s.Servers["fs"].State == app.ServerFailed && s.Health["/a"].Status == app.HealthMissing && s.Notices["loop:x"] == ""
	})
	// The state comes from the file: the window's decision reaches the app.
	if err := w.core.Update(func(s *app.State) error { s.SetPaused(true); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := r.core.Reload(); err != nil || !r.core.Snapshot().State.Paused {
		t.Fatalf("the app did not read the window's pause: %v", err)
	}
}

func TestShowStartsAWindowOrRaisesTheOneUp(t *testing.T) {
	r := newRig(t, nil)
	r.hub.Show(Show{Tab: "Servers"})
	w := r.window()
	if got := <-w.Shows(); got.Tab != "Servers" {
		t.Fatalf("the started window was asked to show %+v", got)
	}
	// Asked again while it is up: no second window; the one up shows it.
	if err := control.Call(context.Background(), r.dir, "raise", nil, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-w.Shows():
		if got != (Show{}) {
			t.Errorf("raise showed %+v", got)
		}
	case <-time.After(apptest.Patience):
		t.Fatal("raise did not reach the window (hung?)")
	}
	r.hub.mu.Lock()
	starting := !r.hub.started.IsZero()
	r.hub.mu.Unlock()
	if starting {
		t.Error("raise started a second window")
	}
	if n := r.spawn.Load(); n != 1 {
		t.Errorf("%d windows started, want 1", n)
	}
	// A second window attaching is turned away, and the first comes forward.
	if _, err := r.attach(); !errors.Is(err, ErrBusy) {
		t.Fatalf("a second window: %v", err)
	}
	select {
	case <-w.Shows():
	case <-time.After(apptest.Patience):
		t.Fatal("the window up was not brought forward (hung?)")
	}
}

func TestSomethingToAskBringsAWindowUpOnce(t *testing.T) {
	r := newRig(t, func(s *app.State) error {
		return s.AddServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: "srv"})
	})
	r.noWindowNeeded("nothing to ask")
	// A host asks for a folder while no window is up.
	at := time.Now().UTC()
	if err := r.core.Update(func(s *app.State) error { _, err := s.AddRequest("fs", "/p/x", "claude-code", at); return err }); err != nil {
		t.Fatal(err)
	}
	w := r.window()
	if later := w.Later(); len(later.Requests) != 0 {
		t.Errorf("the first window got put-off requests: %+v", later)
	}
	// Closed (or killed: the hub only sees the link end) with the request
	// on screen: no window comes back for it by itself.
	w.close()
	r.detached()
	r.noWindowNeeded("what was on screen when the window closed does not bring it back")
	// The host asks anew: a window comes up, and asks it (nothing says
	// the person put it off).
	if err := r.core.Update(func(s *app.State) error { s.TouchRequest("fs", "/p/x", at.Add(time.Minute)); return nil }); err != nil {
		t.Fatal(err)
	}
	w = r.window()
	if later := w.Later(); len(later.Requests) != 0 {
		t.Errorf("the second window was told the request it is to ask again was put off: %+v", later)
	}
	if n := r.spawn.Load(); n != 2 {
		t.Errorf("%d windows started, want 2", n)
	}
}

// A window that ends with a question on screen (closed, or killed) is not
// brought back by the running app for it; opened again (the tray's Open),
// it asks it again: what the window hands on as put off is only what the
// person put off with Later, which the window tells the app.
func TestAWindowThatEndedMidQuestionAsksAgainWhenOpened(t *testing.T) {
	r := newRig(t, func(s *app.State) error {
		return s.AddServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: "srv"})
	})
	at := time.Now().UTC()
	err := r.core.Update(func(s *app.State) error {
		for _, p := range []string{"/p/x", "/p/y"} {
			if _, err := s.AddRequest("fs", p, "claude-code", at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w := r.window()
	// The person puts /p/y off; /p/x is on screen when the window is
	// killed: its link ends without a word.
	var q app.ConsentQueue
	q.PutOffRequest(app.Request{Server: "fs", Path: "/p/y", Last: at})
	w.SetLater(q.Later())
	apptest.Eventually(t, "the app to hear what was put off", func() (bool, string) {
		r.hub.mu.Lock()
		defer r.hub.mu.Unlock()
		later := r.hub.queue.Later()
		return len(later.Requests) == 1, fmt.Sprintf("%+v", later)
	})
	w.conn.Close()
	<-w.done
	w.done <- nil
	r.detached()
	r.noWindowNeeded("the question on screen when the window was killed does not bring it back")

	r.hub.Show(Show{})
	w = r.window()
	var next app.ConsentQueue
	next.SetLater(w.Later())
	ask := next.Next(app.NewGrid(w.core.Snapshot()), time.Now())
	if ask.Kind != app.AskRequest || ask.Request.Path != "/p/x" {
		t.Fatalf("the window opened again asks %+v, want /p/x again", ask)
	}
	next.PutOffRequest(ask.Request)
	if ask := next.Next(app.NewGrid(w.core.Snapshot()), time.Now()); ask.Kind != app.AskNothing {
		t.Errorf("then it asks %+v; /p/y was put off", ask)
	}
}

// reviewer answers reviews in a test window: it edits the request's text,
// or rejects when reject is set.
type reviewer struct{ reject bool }

func (v reviewer) ReviewRequest(_ context.Context, req app.SamplingRequest) (app.SamplingRequest, bool, error) {
	req.Messages[0].Text = strings.ToUpper(req.Messages[0].Text)
	return req, !v.reject, nil
}

func (v reviewer) ReviewResult(_ context.Context, _ app.SamplingRequest, res app.SamplingResult) (app.SamplingResult, bool, error) {
	res.Text += " (reviewed)"
	return res, !v.reject, nil
}

// blocker never answers: the person has not decided yet. It tells shown,
// when set, that a request is on screen.
type blocker struct{ shown chan struct{} }

func (b blocker) ReviewRequest(ctx context.Context, req app.SamplingRequest) (app.SamplingRequest, bool, error) {
	if b.shown != nil {
		b.shown <- struct{}{}
	}
	<-ctx.Done()
	return req, false, ctx.Err()
}

func (blocker) ReviewResult(ctx context.Context, _ app.SamplingRequest, res app.SamplingResult) (app.SamplingResult, bool, error) {
	<-ctx.Done()
	return res, false, ctx.Err()
}

func TestASamplingRequestIsReviewedInAWindowItBringsUp(t *testing.T) {
	r := newRig(t, nil)
	req := app.SamplingRequest{Server: "fs", Messages: []app.SamplingMessage{{Role: app.RoleUser, Text: "hello"}}, MaxTokens: 10}
	got := make(chan app.SamplingRequest, 1)
	go func() {
		out, ok, err := r.hub.ReviewRequest(context.Background(), req)
		if err != nil || !ok {
			t.Errorf("review: ok %v err %v", ok, err)
		}
		got <- out
	}()
	w := r.window()
	w.SetReviewer(reviewer{}) // the window is drawn after the request came
	if out := <-got; out.Messages[0].Text != "HELLO" {
		t.Fatalf("the reviewed request: %+v", out)
	}
	res, ok, err := r.hub.ReviewResult(context.Background(), req, app.SamplingResult{Model: "m", Text: "hi"})
	if err != nil || !ok || res.Text != "hi (reviewed)" {
		t.Fatalf("the reviewed result: %+v %v %v", res, ok, err)
	}
	w.SetReviewer(reviewer{reject: true})
	if _, ok, _ := r.hub.ReviewRequest(context.Background(), req); ok {
		t.Fatal("a rejection came back as accepted")
	}

	// The request's caller gives up: the window is told to withdraw it.
	w.SetReviewer(blocker{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, ok, err := r.hub.ReviewRequest(ctx, req); ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a request whose caller gave up: ok %v err %v", ok, err)
	}
	// The window closes with a review on screen: rejected, not hung.
	onScreen := blocker{shown: make(chan struct{}, 1)}
	w.SetReviewer(onScreen)
	done := make(chan bool, 1)
	go func() {
		_, ok, _ := r.hub.ReviewRequest(context.Background(), req)
		done <- ok
	}()
	<-onScreen.shown
	w.close()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("accepted after the window closed")
		}
	case <-time.After(apptest.Patience):
		t.Fatal("a review outlived its window (hung)")
	}
}

func TestTheWindowsOpsReachTheApp(t *testing.T) {
	r := newRig(t, nil)
	w, err := r.attach()
	if err != nil {
		t.Fatal(err)
	}
	w.Restart("fs")
	if got := w.Log("fs"); got != "stderr of fs" {
		t.Errorf("log: %q", got)
	}
	r.servers.mu.Lock()
	defer r.servers.mu.Unlock()
	if len(r.servers.restarts) != 1 || r.servers.restarts[0] != "fs" {
		t.Errorf("restarts: %q", r.servers.restarts)
	}
}

// The window's Check again reaches the app's health monitor: the folder is
// checked now (here its grandparent went, which no watch sees), the window
// gets the answer, and its live view follows.
func TestTheWindowsCheckReachesTheMonitor(t *testing.T) {
	base := apptest.RealTempDir(t)
	root := filepath.Join(base, "work", "src", "proj")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, func(s *app.State) error {
		if err := s.AddServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: "srv"}); err != nil {
			return err
		}
		return apptest.Share(s, "fs", app.Root{Path: root})
	})
	mon := health.NewMonitor(r.core, health.Options{PollInterval: time.Hour})
	r.ctl.Handle(cli.OpCheck, cli.CheckHandler(mon))
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- mon.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
	apptest.Until(t, r.core, "the folder checked", func(s *app.Snapshot) bool { return s.Health[root].OK() })
	w, err := r.attach()
	if err != nil {
		t.Fatal(err)
	}

	if err := os.Rename(filepath.Join(base, "work"), filepath.Join(base, "work-old")); err != nil {
		t.Fatal(err)
	}
	h, err := w.Check(ctx, root)
	if err != nil || h.Status != app.HealthMissing {
		t.Fatalf("the window's Check: %+v %v, want missing", h, err)
	}
	apptest.Until(t, w.core, "the window's live view to say missing", func(s *app.Snapshot) bool {
		return s.Health[root].Status == app.HealthMissing
	})
	if _, err := w.Check(ctx, "/not/a/root"); err == nil || !strings.Contains(err.Error(), "/not/a/root: not an enabled folder") {
		t.Errorf("Check of no root: %v", err)
	}
}

func TestTheWindowEndsWithTheApp(t *testing.T) {
	r := newRig(t, nil)
	w, err := r.attach()
	if err != nil {
		t.Fatal(err)
	}
	w.SetFinding("Looking for your projects…")
	apptest.Eventually(t, "the tray's line", func() (bool, string) {
		got := r.hub.Finding()
		return got == "Looking for your projects…", got
	})
	r.stop()
	select {
	case err := <-w.done:
		w.done <- err
		if err == nil {
			t.Error("Run ended without saying why")
		}
	case <-time.After(apptest.Patience):
		t.Fatal("the window's link outlived the app (hung)")
	}
}

// A window that ends before it attaches (no display, a crash at start)
// means nobody can be asked: CanAsk and the bridges' OpAsker say so until a
// window attaches again; a window closed after it attached changes nothing.
func TestAWindowThatCannotComeUpMeansNobodyToAsk(t *testing.T) {
	r := newRig(t, nil)
	asker := func() bool {
		t.Helper()
		var a Asker
		if err := control.Call(context.Background(), r.dir, OpAsker, nil, &a); err != nil {
			t.Fatal(err)
		}
		if a.Person != r.hub.CanAsk() {
			t.Fatalf("OpAsker says %v, CanAsk %v", a.Person, r.hub.CanAsk())
		}
		return a.Person
	}
	if !asker() {
		t.Fatal("before any window, the app says nobody can be asked")
	}
	r.hub.Show(Show{})
	w := r.window()
	w.close()
	r.detached()           // a Show before the hub hears the link end goes to the window ending
	r.hub.WindowEnded(nil) // the process the person closed
	if !asker() {
		t.Fatal("a window the person closed made the app say nobody can be asked")
	}

	// The next window crashes before attaching.
	r.crash.Store(true)
	r.hub.Show(Show{})
	select {
	case <-r.crashed:
	case <-time.After(apptest.Patience):
		t.Fatal("no window was started after the last one ended (hung?)")
	}
	if asker() {
		t.Fatal("a window that ended before it came up: the app still says a person can be asked")
	}
	r.crash.Store(false)
	r.hub.Show(Show{})
	r.window()
	if !asker() {
		t.Fatal("a window attached again, and the app still says nobody can be asked")
	}
}
