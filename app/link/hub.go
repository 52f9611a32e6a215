package link

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/control"
	"rootkeeper/app/words"
)

// Options are what a Hub needs besides the core.
type Options struct {
	// Spawn starts a window process, which then attaches itself (main
	// runs this binary's window verb). Required.
	Spawn func() error
	// Servers restarts servers and reads their stderr for the window's
	// Restart and Log; nil answers that they are unavailable.
	Servers app.ServerController
	// Resources, when set, tells the attached window of the servers'
	// resource changes (its Resources… dialog follows them).
	Resources app.ResourceWatcher
	// OnChange is called, from any goroutine, when what the tray shows of
	// the hub changed: the finding line, or a window came or went.
	OnChange func()
	// OnDetach is called when an attached window went (the person closed
	// it): without a tray to come back from, main quits the app there.
	OnDetach func()
	// Quit is called when the window asks to quit Rootkeeper.
	Quit func()
	// AttachTimeout is how long a started window has to attach before
	// another may be started, and how long a review waits for one
	// (default 20 s: a window's first start on a cold disk).
	AttachTimeout time.Duration
	Logger        *slog.Logger
}

// Hub is the running app's end of the link: it starts the window when it
// is needed, keeps the attached one's live view current, and hands it
// what to show and what to review. It is an app.SamplingReviewer: a
// sampling request brings a window up to be reviewed in.
type Hub struct {
	core *app.Core
	opts Options

	mu sync.Mutex
	// win is the attached window; nil when none is.
	win *peer
	// started is when a window was started that has not attached yet.
	started time.Time
	// cannotShow says why the window cannot come up ("" when it can): the
	// last one started ended, or could not be started, before it
	// attached. Then nobody can be asked (CanAsk) until a window attaches.
	cannotShow string
	// pending is what to show once the started window attaches.
	pending *Show
	// queue decides whether something waits for the person while no
	// window is up; it keeps what the window said the person put off
	// (handed to the next window) and what a window ending left.
	queue app.ConsentQueue
	// finding is the attached window's line about its scan.
	finding string
	// attached is closed when a window attaches (and then replaced).
	attached chan struct{}
	nextID   uint64
	reviews  map[uint64]chan reviewed
	// kick has Run look again (a window went).
	kick chan struct{}
}

var _ app.SamplingReviewer = (*Hub)(nil)

// NewHub makes the hub of core's app.
func NewHub(core *app.Core, opts Options) *Hub {
	if opts.AttachTimeout <= 0 {
		opts.AttachTimeout = 20 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Hub{core: core, opts: opts, attached: make(chan struct{}), reviews: map[uint64]chan reviewed{}, kick: make(chan struct{}, 1)}
}

// Register answers the window's ops on ctl: the link itself, "raise" (a
// second launch of the app brings the window up), "restart" and "log".
func (h *Hub) Register(ctl *control.Server) {
	ctl.HandleStream(Op, h.serveWindow)
	// The app brings the window up when something waits for the person
	// (Run): bridges ask before they hold a call for an answer.
	ctl.Handle(OpAsker, func(context.Context, json.RawMessage) (any, error) {
		return Asker{Person: h.CanAsk()}, nil
	})
	ctl.Handle("raise", func(context.Context, json.RawMessage) (any, error) {
		h.Show(Show{})
		return "raised", nil
	})
	ctl.Handle("restart", func(_ context.Context, args json.RawMessage) (any, error) {
		name, err := serverArg(args)
		if err != nil || h.opts.Servers == nil {
			return nil, errors.Join(err, errNoServers(h.opts.Servers))
		}
		h.opts.Servers.Restart(name)
		return "ok", nil
	})
	ctl.Handle("log", func(_ context.Context, args json.RawMessage) (any, error) {
		name, err := serverArg(args)
		if err != nil || h.opts.Servers == nil {
			return nil, errors.Join(err, errNoServers(h.opts.Servers))
		}
		return h.opts.Servers.Log(name), nil
	})
}

// OpAsker is the control op that tells a bridge whether the running app
// can ask the person (Asker): the app with its window can, headless
// cannot (it does not answer the op).
const OpAsker = "asker"

// Asker is the answer to OpAsker.
type Asker struct {
	// Person is true when a question reaches a person: the window is up,
	// or comes up for it.
	Person bool `json:"person"`
}

type serverArgs struct {
	Server string `json:"server"`
}

func serverArg(raw json.RawMessage) (string, error) {
	var a serverArgs
	if err := json.Unmarshal(raw, &a); err != nil || a.Server == "" {
		return "", fmt.Errorf("bad request: want {\"server\": NAME}")
	}
	return a.Server, nil
}

func errNoServers(s app.ServerController) error {
	if s == nil {
		return errors.New("this app runs no servers")
	}
	return nil
}

// Attached reports whether a window is up.
func (h *Hub) Attached() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.win != nil
}

// Finding is the window's line about its scan for the tray ("" when none,
// or no window is up).
func (h *Hub) Finding() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.finding
}

// Show brings the window up showing s: the attached one comes forward, or
// a window is started.
func (h *Hub) Show(s Show) {
	h.mu.Lock()
	p := h.win
	if p == nil {
		h.pending = &s
		h.startLocked()
	}
	h.mu.Unlock()
	if p != nil {
		p.send(message{Kind: kindShow, Show: &s})
	}
}

// CanAsk reports whether a question reaches a person: a window is up, or
// one can come up (none started since failed before it attached). A
// confined server's call past its folders, and a held bridge, wait for an
// answer only then.
func (h *Hub) CanAsk() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.win != nil || h.cannotShow == ""
}

// WindowEnded tells the hub that a window process it started ended, with
// err (nil for a clean exit). One that ended before it attached cannot be
// shown (a display that is gone, a crash at start): nobody can be asked
// until a window attaches again.
func (h *Hub) WindowEnded(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started.IsZero() {
		return // it had attached: the person closed it
	}
	h.started = time.Time{}
	h.cannotShow = "the window ended before it came up"
	if err != nil {
		h.cannotShow += ": " + err.Error()
	}
	h.opts.Logger.Warn("the window cannot come up; confined servers' questions are refused at once until it does", "err", err)
}

// startLocked starts a window unless one is on its way. h.mu is held.
func (h *Hub) startLocked() {
	if !h.started.IsZero() && time.Since(h.started) < h.opts.AttachTimeout {
		return
	}
	h.started = time.Now()
	go func() {
		if err := h.opts.Spawn(); err != nil {
			h.opts.Logger.Warn("cannot open the window", "err", err)
			h.mu.Lock()
			h.started = time.Time{}
			h.cannotShow = err.Error()
			h.mu.Unlock()
		}
	}()
}

// Run starts a window whenever something waits for the person (a
// question or a request app.ConsentQueue would ask) while none is up,
// until ctx ends.
func (h *Hub) Run(ctx context.Context) error {
	changed, unsubscribe := h.core.Subscribe()
	defer unsubscribe()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if wait := h.askIfNeeded(); wait > 0 {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-timer.C:
		case <-h.kick:
		}
	}
}

// askIfNeeded starts a window when the consent queue has something to
// ask and no window is up or on its way; it returns how long to wait
// before looking again while servers are still starting.
func (h *Hub) askIfNeeded() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.win != nil || (!h.started.IsZero() && time.Since(h.started) < h.opts.AttachTimeout) {
		return 0
	}
	ask := h.queue.Next(app.NewGrid(h.core.Snapshot()), time.Now())
	switch ask.Kind {
	case app.AskNothing:
		return 0
	case app.AskWait:
		return ask.Wait
	}
	h.startLocked()
	return 0
}

// serveWindow is the link op: one window at a time is attached.
func (h *Hub) serveWindow(ctx context.Context, _ json.RawMessage, conn net.Conn) error {
	p := newPeer(conn, h.opts.Logger)
	defer p.close()
	h.mu.Lock()
	if other := h.win; other != nil {
		// Two windows started at once: the first stays, and comes forward.
		h.mu.Unlock()
		other.send(message{Kind: kindShow, Show: &Show{}})
		b, _ := encode(message{Kind: kindBusy})
		conn.SetWriteDeadline(time.Now().Add(time.Second))
		conn.Write(b)
		return nil
	}
	h.win = p
	h.started = time.Time{}
	h.cannotShow = ""
	show := h.pending
	h.pending = nil
	later := h.queue.Later()
	close(h.attached)
	h.attached = make(chan struct{})
	h.mu.Unlock()
	h.changed()

	go p.writeLoop(h.core)
	// What to show comes before Later, which ends Attach: the window has
	// it before its first render (the request the tray's line named is
	// asked first).
	if show != nil {
		p.send(message{Kind: kindShow, Show: show})
	}
	p.send(message{Kind: kindLater, Later: &later})
	if w := h.opts.Resources; w != nil {
		stop := w.OnResourceEvent(func(server, uri string) {
			p.send(message{Kind: kindResource, Resource: &resourceEvent{Server: server, URI: uri}})
		})
		defer stop()
	}
	err := h.readLoop(p)

	p.close()
	h.mu.Lock()
	h.win = nil
	h.finding = ""
	// What was on screen when the window ended (closed, or killed) does
	// not bring a window up again at once: the next window asks it again;
	// what comes later brings a window up.
	h.queue.PutOffAll(app.NewGrid(h.core.Snapshot()))
	h.mu.Unlock()
	select {
	case h.kick <- struct{}{}:
	default:
	}
	h.changed()
	// Logged: the moment the app knows the window is gone (a window
	// opened from now on is a new one), which the end-to-end tests wait on.
	h.opts.Logger.Info("the window's link ended")
	if h.opts.OnDetach != nil && ctx.Err() == nil {
		h.opts.OnDetach()
	}
	return err
}

// readLoop reads the window's messages until the link ends.
func (h *Hub) readLoop(p *peer) error {
	r := bufio.NewReaderSize(p.conn, 64<<10)
	for {
		m, err := readMessage(r)
		if err != nil {
			return err
		}
		switch m.Kind {
		case kindReviewed:
			h.mu.Lock()
			ch := h.reviews[m.ID]
			h.mu.Unlock()
			if ch != nil && m.Reviewed != nil {
				select {
				case ch <- *m.Reviewed:
				default:
				}
			}
		case kindFinding:
			h.mu.Lock()
			was := h.finding
			h.finding = words.SafeText(m.Text)
			h.mu.Unlock()
			if was != m.Text {
				h.changed()
			}
		case kindLater:
			if m.Later != nil {
				h.mu.Lock()
				h.queue.SetLater(*m.Later)
				h.mu.Unlock()
			}
		case kindQuit:
			if h.opts.Quit != nil {
				h.opts.Quit()
			}
		}
	}
}

func (h *Hub) changed() {
	if h.opts.OnChange != nil {
		h.opts.OnChange()
	}
}

// ReviewRequest brings a window up (if none is) and waits for the
// person's review of req there. No window coming up, or the window
// closing, rejects it.
func (h *Hub) ReviewRequest(ctx context.Context, req app.SamplingRequest) (app.SamplingRequest, bool, error) {
	a, err := h.review(ctx, review{Request: req})
	if err != nil || !a.OK || a.Request == nil {
		return req, false, err
	}
	return *a.Request, true, nil
}

// ReviewResult is ReviewRequest for the model's answer to req.
func (h *Hub) ReviewResult(ctx context.Context, req app.SamplingRequest, res app.SamplingResult) (app.SamplingResult, bool, error) {
	a, err := h.review(ctx, review{Request: req, Result: &res})
	if err != nil || !a.OK || a.Result == nil {
		return res, false, err
	}
	return *a.Result, true, nil
}

func (h *Hub) review(ctx context.Context, rv review) (reviewed, error) {
	p, err := h.window(ctx)
	if err != nil {
		return reviewed{}, err
	}
	ch := make(chan reviewed, 1)
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	h.reviews[id] = ch
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.reviews, id)
		h.mu.Unlock()
	}()
	p.send(message{Kind: kindReview, ID: id, Review: &rv})
	select {
	case a := <-ch:
		if a.Err != "" {
			return a, errors.New(a.Err)
		}
		return a, nil
	case <-p.gone:
		return reviewed{}, nil // the window closed: rejected
	case <-ctx.Done():
		p.send(message{Kind: kindWithdraw, ID: id})
		return reviewed{}, ctx.Err()
	}
}

// window is the attached window, starting one and waiting for it to attach
// when none is up.
func (h *Hub) window(ctx context.Context) (*peer, error) {
	timeout := time.NewTimer(h.opts.AttachTimeout)
	defer timeout.Stop()
	for {
		h.mu.Lock()
		p, attached := h.win, h.attached
		if p == nil {
			h.startLocked()
		}
		h.mu.Unlock()
		if p != nil {
			return p, nil
		}
		select {
		case <-attached:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout.C:
			return nil, fmt.Errorf("no window came up within %v to review it", h.opts.AttachTimeout)
		}
	}
}

// peer is an attached window, as the hub writes to it.
type peer struct {
	conn   net.Conn
	logger *slog.Logger
	// out are the messages waiting to be written; the live view is not
	// queued but read from the core when it is written, so that a burst
	// of changes is one message.
	out       chan message
	gone      chan struct{}
	closeOnce sync.Once
}

// peerQueue is how many messages may wait for a window; one that falls
// this far behind is cut off.
const peerQueue = 256

func newPeer(conn net.Conn, logger *slog.Logger) *peer {
	return &peer{conn: conn, logger: logger, out: make(chan message, peerQueue), gone: make(chan struct{})}
}

// send queues m without blocking (it runs on the MCP client's goroutines
// too); a window that does not keep up is cut off.
func (p *peer) send(m message) {
	select {
	case <-p.gone:
	case p.out <- m:
	default:
		p.logger.Warn("the window does not read its messages; closing the link")
		p.close()
	}
}

func (p *peer) close() {
	p.closeOnce.Do(func() {
		close(p.gone)
		p.conn.Close()
	})
}

// writeTimeout bounds one write to the window.
const writeTimeout = 10 * time.Second

// writeLoop writes the live view (first whole, then what changed) and the
// queued messages until the link ends.
func (p *peer) writeLoop(core *app.Core) {
	changed, unsubscribe := core.Subscribe()
	defer unsubscribe()
	w := bufio.NewWriterSize(p.conn, 64<<10)
	var sent *app.Snapshot
	write := func(m message) error {
		b, err := encode(m)
		if err != nil {
			p.logger.Warn("a message for the window was not sent", "kind", m.Kind, "err", err)
			return nil
		}
		p.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		_, err = w.Write(b)
		return err
	}
	writeLive := func() error {
		snap := core.Snapshot()
		l := app.LiveSince(sent, snap)
		sent = snap
		if l.Empty() {
			return nil
		}
		return write(message{Kind: kindLive, Live: &l})
	}
	err := writeLive()
	for err == nil {
		if len(p.out) == 0 && len(changed) == 0 {
			if err = w.Flush(); err != nil {
				break
			}
		}
		select {
		case <-p.gone:
			return
		case <-changed:
			err = writeLive()
		case m := <-p.out:
			err = write(m)
		}
	}
	p.close()
}
