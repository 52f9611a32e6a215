package link

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/cli"
	"rootkeeper/app/control"
)

// ErrBusy says another window is already up; it was brought forward
// instead.
var ErrBusy = errors.New("a Rootkeeper window is already open")

// attachTimeout bounds how long attaching waits for the app's first
// messages.
const attachTimeout = 10 * time.Second

// Window is the window process's end of the link. It mirrors the running
// app's live view into the window's core, and it is the window's
// app.ServerController, app.ResourceBrowser and app.ResourceWatcher, each
// through the running app; it is also the window's app.HealthChecker.
type Window struct {
	dir  string
	core *app.Core
	conn net.Conn
	r    *bufio.Reader

	wmu sync.Mutex // serialises writes

	later app.Later
	shows chan Show
	// putOff is what the person put off last (SetLater), laterKick says
	// it is to be sent, and done ends the sender when the link ends.
	putOff    *app.Later
	laterKick chan struct{}
	done      chan struct{}

	mu          sync.Mutex
	reviewer    app.SamplingReviewer
	reviewerSet chan struct{}
	waiting     map[uint64]context.CancelFunc
	watchers    map[int]func(server, uri string)
	nextWatcher int
	finding     string
}

var (
	_ app.HealthChecker    = (*Window)(nil)
	_ app.ServerController = (*Window)(nil)
	_ app.ResourceBrowser  = (*Window)(nil)
	_ app.ResourceWatcher  = (*Window)(nil)
)

// Attach links a window to the app running with state folder dir: once
// it returns, core holds the app's live view and Later what the app had
// put off. It returns control.ErrNotRunning when no app runs there, and
// ErrBusy when another window is up.
func Attach(ctx context.Context, dir string, core *app.Core) (*Window, error) {
	conn, r, err := control.Dial(ctx, dir, Op, nil)
	if err != nil {
		return nil, err
	}
	w := &Window{dir: dir, core: core, conn: conn, r: r, shows: make(chan Show, 8),
		laterKick: make(chan struct{}, 1), done: make(chan struct{}),
		reviewerSet: make(chan struct{}), waiting: map[uint64]context.CancelFunc{}, watchers: map[int]func(string, string){}}
	conn.SetReadDeadline(time.Now().Add(attachTimeout))
	for {
		m, err := readMessage(r)
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("link: %w", err)
		}
		switch m.Kind {
		case kindBusy:
			conn.Close()
			return nil, ErrBusy
		case kindLater:
			if m.Later != nil {
				w.later = *m.Later
			}
			conn.SetReadDeadline(time.Time{})
			return w, nil
		default:
			w.handle(context.Background(), m)
		}
	}
}

// Later is what the app had put off when the window attached.
func (w *Window) Later() app.Later { return w.later }

// Shows are what the app asks the window to show (the tray's Open, a
// second launch, a folder to share); the window comes forward for each.
func (w *Window) Shows() <-chan Show { return w.shows }

// Run reads the app's messages until the link ends, which is when the app
// quits (or ctx ends); the window should close then.
func (w *Window) Run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { w.conn.Close() })
	defer stop()
	defer w.conn.Close()
	defer close(w.done)
	go w.sendLater()
	for {
		m, err := readMessage(w.r)
		if err != nil {
			w.mu.Lock()
			for _, cancel := range w.waiting {
				cancel()
			}
			w.mu.Unlock()
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("link to the app ended: %w", err)
		}
		w.handle(ctx, m)
	}
}

func (w *Window) handle(ctx context.Context, m message) {
	switch m.Kind {
	case kindLive:
		if m.Live != nil {
			w.core.SetLive(*m.Live)
		}
	case kindShow:
		if m.Show != nil {
			select {
			case w.shows <- *m.Show:
			default: // the window is behind on showing; it comes forward anyway
			}
		}
	case kindReview:
		if m.Review != nil {
			go w.review(ctx, m.ID, *m.Review)
		}
	case kindWithdraw:
		w.mu.Lock()
		cancel := w.waiting[m.ID]
		w.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	case kindResource:
		if m.Resource != nil {
			w.mu.Lock()
			fns := make([]func(string, string), 0, len(w.watchers))
			for _, fn := range w.watchers {
				fns = append(fns, fn)
			}
			w.mu.Unlock()
			for _, fn := range fns {
				fn(m.Resource.Server, m.Resource.URI)
			}
		}
	}
}

// send writes m to the app; a failed write ends the link (Run returns).
func (w *Window) send(m message) {
	b, err := encode(m)
	if err != nil {
		return
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := w.conn.Write(b); err != nil {
		w.conn.Close()
	}
}

// SetReviewer sets who reviews sampling requests in this window (nil when
// the window goes); reviews that arrive before it is set wait for it.
func (w *Window) SetReviewer(r app.SamplingReviewer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reviewer = r
	if r != nil {
		select {
		case <-w.reviewerSet:
		default:
			close(w.reviewerSet)
		}
	}
}

// review has the window's reviewer review rv and sends the answer back.
func (w *Window) review(ctx context.Context, id uint64, rv review) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w.mu.Lock()
	w.waiting[id] = cancel
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.waiting, id)
		w.mu.Unlock()
	}()
	var a reviewed
	select {
	case <-w.reviewerSet:
	case <-ctx.Done():
	}
	w.mu.Lock()
	r := w.reviewer
	w.mu.Unlock()
	switch {
	case r == nil || ctx.Err() != nil:
		// No one to review it: rejected.
	case rv.Result == nil:
		req, ok, err := r.ReviewRequest(ctx, rv.Request)
		a = reviewed{Request: &req, OK: ok, Err: errText(err)}
	default:
		res, ok, err := r.ReviewResult(ctx, rv.Request, *rv.Result)
		a = reviewed{Result: &res, OK: ok, Err: errText(err)}
	}
	w.send(message{Kind: kindReviewed, ID: id, Reviewed: &a})
}

func errText(err error) string {
	if err == nil || errors.Is(err, context.Canceled) {
		return ""
	}
	return err.Error()
}

// SetLater tells the app what the person put off in this window (the
// whole of it: app.ConsentQueue's Later), for the next window: what was
// on screen when this one ends is asked again there, what was put off is
// not. It does not wait for the app (the window calls it from its UI
// goroutine); the last value is sent.
func (w *Window) SetLater(l app.Later) {
	w.mu.Lock()
	w.putOff = &l
	w.mu.Unlock()
	select {
	case w.laterKick <- struct{}{}:
	default:
	}
}

// sendLater sends what SetLater was last told, until the link ends.
func (w *Window) sendLater() {
	for {
		select {
		case <-w.done:
			return
		case <-w.laterKick:
		}
		w.mu.Lock()
		l := w.putOff
		w.mu.Unlock()
		if l != nil {
			w.send(message{Kind: kindLater, Later: l})
		}
	}
}

// SetFinding tells the app the window's line about its scan, for the tray.
func (w *Window) SetFinding(text string) {
	w.mu.Lock()
	same := w.finding == text
	w.finding = text
	w.mu.Unlock()
	if !same {
		w.send(message{Kind: kindFinding, Text: text})
	}
}

// QuitApp asks the app to quit (the window's Quit); the link ends then.
func (w *Window) QuitApp() { w.send(message{Kind: kindQuit}) }

// callTimeout bounds one op the window asks of the app.
const callTimeout = 10 * time.Second

// Restart asks the app to restart the server called name.
func (w *Window) Restart(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	control.Call(ctx, w.dir, "restart", serverArgs{Server: name}, nil)
}

// Log is the server's recent stderr, as the app holds it.
func (w *Window) Log(name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	var text string
	if err := control.Call(ctx, w.dir, "log", serverArgs{Server: name}, &text); err != nil {
		return "(the log could not be read: " + err.Error() + ")"
	}
	return text
}

// Check asks the app to check the root at path again now (the Roots
// tab's "Check again"), and returns the health its monitor found; the
// window's live view follows.
func (w *Window) Check(ctx context.Context, path string) (app.Health, error) {
	var h app.Health
	err := control.Call(ctx, w.dir, cli.OpCheck, cli.CheckRequest{Root: path}, &h)
	return h, err
}

// ListResources lists a server's resources through the app.
func (w *Window) ListResources(ctx context.Context, server string) ([]app.ResourceInfo, error) {
	var a cli.ResourcesAnswer
	err := control.Call(ctx, w.dir, "resources", cli.ResourcesRequest{Op: "list", Server: server}, &a)
	return a.Resources, err
}

// ReadResource reads one of a server's resources through the app.
func (w *Window) ReadResource(ctx context.Context, server, uri string) ([]app.ResourceContent, error) {
	var a cli.ResourcesAnswer
	err := control.Call(ctx, w.dir, "resources", cli.ResourcesRequest{Op: "read", Server: server, URI: uri}, &a)
	return a.Contents, err
}

// OnResourceEvent calls fn for each change of a server's resources the
// app hears of, until the returned func is called.
func (w *Window) OnResourceEvent(fn func(server, uri string)) (stop func()) {
	w.mu.Lock()
	w.nextWatcher++
	id := w.nextWatcher
	w.watchers[id] = fn
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		delete(w.watchers, id)
		w.mu.Unlock()
	}
}
