package mcp

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/app/logfile"
	"rootkeeper/app/secrets/spot"
	"rootkeeper/mcp/confine"
)

// legacyVersion is what a server that cannot take the server/discover probe
// is offered in initialize.
const legacyVersion = "2025-11-25"

// modernVersion is the first protocol version where roots are deprecated and
// reach servers only as input requests.
const modernVersion = "2026-07-28"

type adapterCmd int

const (
	cmdRestart adapterCmd = iota + 1
	cmdStop
	cmdEmptied  // the visible set became empty: restart so the server forgets
	cmdNarrowed // a confined server lost a folder: kill it at once, then restart
	cmdHold     // a slot of its configuration is no longer allowed: kill it at once, hold it
)

// adapter owns one server: its SDK client, its session, its subprocess and
// its status. run drives connections; syncRoots follows roots changes.
type adapter struct {
	m      *Manager
	cfg    app.Server // fixed for the adapter's life; a new config makes a new adapter
	mode   app.RootsMode
	client *sdk.Client
	stderr *ring
	// witness is what the current confined run leaves to diagnose its end
	// (nil when it runs unconfined); guarded by mu.
	witness *RunWitness
	logf    *logfile.File // StateDir/logs/NAME.log (rotated while written), nil if none

	wake     chan struct{}   // roots may have changed (buffered 1)
	inputs   chan struct{}   // what it may see or start with may have changed (buffered 1)
	cmds     chan adapterCmd // restart, stop (buffered)
	cancel   context.CancelFunc
	ctxReady chan struct{} // closed once cancel is set
	done     chan struct{} // closed when run has returned

	quiet atomic.Bool // suppress roots list_changed (see setClientRoots)
	// owed: a roots/list was refused by the gate, so the server may hold
	// an old list; syncRoots tells it again once the gate admits it.
	owed atomic.Bool
	// asked counts the list_changed notifications sent and not yet
	// followed by a roots/list (at most maxAsked): each lets one roots/list
	// through without counting against the rate, since Rootkeeper asked for
	// it. A server asking on its own is bounded by the rate as before.
	asked atomic.Int32

	rootsGate   *gate      // bounds the server's roots/list requests (gate.go)
	gate        *gate      // bounds its other requests: sampling, elicitation, ping
	listChanged *coalescer // resources/list_changed, at most one a second

	publish atomic.Bool // while run is going, statuses are published by the manager's batch

	hider atomic.Pointer[spot.Hider] // the secrets it was started with, which errors and its stderr must not show

	mu          sync.Mutex
	status      app.ServerStatus
	sess        *sdk.ClientSession
	version     string // protocol version of sess
	handshake   string // protocol version of the connection being set up
	proc        *process
	startedWith []string // args/env modes: the paths the process got
	// observer is the confined running server's (nil unconfined): a grant
	// reaches it through the observer (confinedStale).
	observer *confine.Observer
	legacy   bool // skip the server/discover probe (go-sdk #1177)
}

func newAdapter(m *Manager, srv app.Server) *adapter {
	a := &adapter{
		m:        m,
		cfg:      srv,
		mode:     srv.Mode(),
		stderr:   newRing(m.opts.StderrBytes),
		wake:     make(chan struct{}, 1),
		inputs:   make(chan struct{}, 1),
		cmds:     make(chan adapterCmd, 4),
		ctxReady: make(chan struct{}),
		done:     make(chan struct{}),
	}
	caps := &sdk.ClientCapabilities{} // no roots capability
	if a.mode == app.RootsProtocol {
		caps.RootsV2 = &sdk.RootCapabilities{ListChanged: true}
	}
	copts := &sdk.ClientOptions{
		Logger:       m.log.With("server", srv.Name),
		Capabilities: caps,
		// Input requests are fulfilled by our own loop (roots.go) so that
		// they obey the same rule, errors and audit as roots/list.
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		// Resource notifications go to Manager.OnResourceEvent (resources.go).
		ResourceUpdatedHandler:     a.resourceUpdated,
		ResourceListChangedHandler: a.resourceListChanged,
	}
	if srv.SamplingMode() != app.SamplingOff {
		// Declares the sampling capability (and nothing else: the roots
		// capability above is left as it is).
		copts.CreateMessageHandler = a.createMessage
	}
	a.client = sdk.NewClient(&sdk.Implementation{Name: "rootkeeper", Version: app.Version}, copts)
	a.client.AddReceivingMiddleware(a.receivingMiddleware)
	// Added last, so outermost: a request beyond the bounds goes no further.
	a.client.AddReceivingMiddleware(a.gateMiddleware)
	a.client.AddSendingMiddleware(a.sendingMiddleware)
	a.status = app.ServerStatus{State: app.ServerStarting, Since: time.Now().UTC()}
	// roots/list is cheap to answer and an honest server asks once per
	// list_changed, which follow grants: its bounds are wide. The others
	// reach a person or a paid model: theirs are narrow.
	a.rootsGate = newGate(m.opts.MaxInFlight, 10*m.opts.RequestsPerSecond, 10*m.opts.RequestBurst)
	a.gate = newGate(m.opts.MaxInFlight, m.opts.RequestsPerSecond, m.opts.RequestBurst)
	a.listChanged = &coalescer{interval: time.Second, fn: func() {
		if a.current() {
			a.m.resourceEvent(a.cfg.Name, "")
		}
	}}
	return a
}

// gateMiddleware refuses the server's requests beyond its bounds (see
// gate); notifications pass.
func (a *adapter) gateMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if isNotification(method) {
			return next(ctx, method, req)
		}
		g, enter := a.gate, a.gate.enter
		if method == methodListRoots {
			g, enter = a.rootsGate, a.rootsGate.enter
			if a.takeAsked() {
				enter = g.enterUnmetered
			}
		}
		done, refused := enter(method)
		if refused != nil {
			if method == methodListRoots && !a.owed.Swap(true) {
				// The server keeps whatever it had: tell it again, with a
				// fresh list_changed, as soon as it may ask (a revoke must
				// land however fast the changes came).
				time.AfterFunc(g.retryAfter(), a.poke)
			}
			return nil, refused
		}
		defer done()
		return next(ctx, method, req)
	}
}

// maxAsked bounds the roots/list requests let through unmetered: a burst of
// changes asks an honest server for a few lists at most, one per change it
// has not yet answered.
const maxAsked = 4

// noteAsked records a list_changed sent to the server.
func (a *adapter) noteAsked() {
	for {
		n := a.asked.Load()
		if n >= maxAsked || a.asked.CompareAndSwap(n, n+1) {
			return
		}
	}
}

// takeAsked uses up one roots/list Rootkeeper asked for, if any is left.
func (a *adapter) takeAsked() bool {
	for {
		n := a.asked.Load()
		if n <= 0 {
			return false
		}
		if a.asked.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// poke tells the adapter that its visible set may have changed.
func (a *adapter) poke() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// inputsChanged tells the adapter that the snapshot's inputs changed: a
// held server may start, a running one may have to be held.
func (a *adapter) inputsChanged() {
	select {
	case a.inputs <- struct{}{}:
	default:
	}
}

func (a *adapter) command(c adapterCmd) {
	select {
	case a.cmds <- c:
	default: // enough commands are queued already
	}
}

// retire ends the adapter: its server is shut down and it publishes no
// more status.
func (a *adapter) retire() {
	go func() {
		<-a.ctxReady
		a.cancel()
	}()
}

func (a *adapter) currentSession() *sdk.ClientSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sess
}

// negotiated is the protocol version of the server's last handshake, ""
// before the first.
func (a *adapter) negotiated() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.handshake
}

// update edits the status and publishes it: at once, or, while run is
// going, soon after in the manager's next batch, so that answering
// roots/list never waits for the core.
func (a *adapter) update(edit func(*app.ServerStatus)) {
	a.mu.Lock()
	edit(&a.status)
	a.mu.Unlock()
	if a.publish.Load() {
		a.m.statusChanged(a)
		return
	}
	a.publishNow()
}

// currentStatus is a copy of the adapter's status, safe to publish.
func (a *adapter) currentStatus() app.ServerStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.status
	st.LastSent = slices.Clone(st.LastSent)
	if st.LastSent == nil {
		st.LastSent = []string{}
	}
	return st
}

func (a *adapter) publishNow() { a.m.setStatuses([]*adapter{a}) }

func (a *adapter) setState(state app.ServerState, err error) {
	a.update(func(s *app.ServerStatus) {
		s.State = state
		s.Since = time.Now().UTC()
		s.Error = ""
		if err != nil {
			s.Error = a.hide(err).Error()
		}
		if state != app.ServerConnected {
			s.PID = 0
			if state != app.ServerStarting {
				s.ProtocolVersion, s.ServerName, s.ServerVersion = "", "", ""
			}
		}
	})
}

func (a *adapter) connected(cs *sdk.ClientSession, proc *process) {
	res := cs.InitializeResult()
	a.mu.Lock()
	a.sess, a.proc, a.version = cs, proc, res.ProtocolVersion
	a.mu.Unlock()
	a.update(func(s *app.ServerStatus) {
		s.State = app.ServerConnected
		s.Since = time.Now().UTC()
		s.Error = ""
		s.PID = proc.PID()
		s.ProtocolVersion = res.ProtocolVersion
		s.ServerName, s.ServerVersion = "", ""
		if res.ServerInfo != nil {
			s.ServerName, s.ServerVersion = res.ServerInfo.Name, res.ServerInfo.Version
		}
	})
	a.m.log.Info("server connected", "server", a.cfg.Name, "protocol", res.ProtocolVersion, "pid", proc.PID())
	if a.mode == app.RootsProtocol && res.ProtocolVersion >= modernVersion {
		// SEP-2577 asks implementations to warn when a deprecated capability
		// is negotiated.
		a.m.log.Warn("roots capability negotiated on a protocol version that deprecates it (SEP-2577)",
			"server", a.cfg.Name, "protocol", res.ProtocolVersion)
	}
}

// connect makes one connection attempt. A stdio server that fails the
// first attempt, which starts with the server/discover probe, is started
// once more and offered initialize only: a server predating 2026-07-28 may
// exit on the unknown method (go-sdk #1177). If that works it is remembered.
func (a *adapter) connect(ctx context.Context) (*sdk.ClientSession, *process, error) {
	a.mu.Lock()
	legacy := a.legacy
	a.mu.Unlock()
	version := ""
	if legacy {
		version = legacyVersion
	}
	cs, proc, err := a.dial(ctx, version)
	if err == nil || legacy || ctx.Err() != nil || a.cfg.Type != app.TransportStdio || a.m.opts.NewTransport != nil {
		return cs, proc, err
	}
	cs, proc, err2 := a.dial(ctx, legacyVersion)
	if err2 != nil {
		return nil, nil, err
	}
	a.m.log.Info("server did not survive the server/discover probe; speaking initialize only from now on (go-sdk #1177)",
		"server", a.cfg.Name, "probe_error", err)
	a.mu.Lock()
	a.legacy = true
	a.mu.Unlock()
	return cs, proc, nil
}

// dial starts the transport and runs the handshake, within ConnectTimeout.
func (a *adapter) dial(ctx context.Context, version string) (*sdk.ClientSession, *process, error) {
	t, proc, err := a.transport(ctx)
	if err != nil {
		return nil, nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, a.m.opts.ConnectTimeout)
	defer cancel()
	// If the handshake runs out of time, kill the process so that nothing
	// waits on it.
	stopKill := context.AfterFunc(hctx, func() {
		if proc != nil {
			proc.group().Kill()
		}
	})
	cs, err := a.client.Connect(hctx, t, &sdk.ClientSessionOptions{ProtocolVersion: version})
	stopKill()
	if err != nil {
		if proc != nil {
			proc.group().reap(a.m.opts.KillAfter)
		}
		if tail := lastLine(a.stderr.String()); tail != "" && a.cfg.Type == app.TransportStdio {
			err = fmt.Errorf("%w; stderr: %s", err, tail)
		}
		return nil, nil, a.hide(err)
	}
	return cs, proc, nil
}

// recordStartRoots notes the paths an args/env server was started with, in
// the status and the audit log.
func (a *adapter) recordStartRoots(paths []string) {
	uris := make([]string, len(paths))
	for i, p := range paths {
		uris[i] = app.URIFromPath(p)
	}
	via := audit.ViaArgs
	if a.mode == app.RootsEnv {
		via = audit.ViaEnv
	}
	a.m.writeAudit(audit.Entry{Server: a.cfg.Name, Roots: uris, Via: via})
	now := time.Now().UTC()
	a.update(func(s *app.ServerStatus) { s.LastSent, s.LastSentAt = uris, now })
}

// shutdown ends a session: a stdio server is stopped by StopProcess (stdin
// closed, then SIGTERM and SIGKILL to its group, and what it left behind),
// a remote one has its session closed.
func (a *adapter) shutdown(cs *sdk.ClientSession, proc *process) {
	closed := make(chan struct{})
	closeSession := func() {
		go func() {
			cs.Close()
			close(closed)
		}()
	}
	if proc == nil {
		closeSession()
		select {
		case <-closed:
		case <-time.After(a.m.opts.StopGrace + a.m.opts.KillAfter):
			a.m.log.Warn("session did not close", "server", a.cfg.Name)
		}
		return
	}
	StopProcess(closeSession, closed, proc.group(), a.m.opts.StopGrace, a.m.opts.KillAfter)
}

func orEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[len(s)-300:]
	}
	return s
}
