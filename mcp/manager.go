package mcp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
	"rootkeeper/app/audit"
)

// Options configures a Manager. Zero fields take the documented defaults.
type Options struct {
	// StateDir holds the audit log (StateDir/audit*.jsonl: package audit) and the
	// servers' stderr logs (StateDir/logs/NAME.log). Empty: neither is
	// written (stderr is still kept in memory for Log).
	StateDir string
	// Logger receives the manager's own log. Nil: discard.
	Logger *slog.Logger

	// BackoffMin is the delay before the first reconnection (default 1 s);
	// it doubles with each further failure up to BackoffMax (default 60 s),
	// with jitter.
	BackoffMin, BackoffMax time.Duration
	// StableAfter is how long a session must last for the backoff to start
	// again from BackoffMin when it ends (default 30 s).
	StableAfter time.Duration
	// ConnectTimeout bounds one connection attempt, handshake included
	// (default 30 s).
	ConnectTimeout time.Duration
	// SettleTimeout bounds how long a server that holds its roots from its
	// start (confined, roots mode args or env) waits for its roots' access
	// checks before it is started anyway (default 3 s).
	SettleTimeout time.Duration
	// DiscoverTimeout bounds the server/discover probe; a server silent for
	// that long is taken for a legacy one and sent initialize (default 5 s).
	DiscoverTimeout time.Duration
	// StopGrace is how long a stdio server has to exit once its stdin is
	// closed before its process group gets SIGTERM (default 2 s); KillAfter
	// is how long after SIGTERM it gets SIGKILL (default 5 s).
	StopGrace, KillAfter time.Duration
	// KeepAlive is how often each connected server is pinged (default 30
	// s; negative: never). Two pings in a row without an answer mark it
	// unresponsive and it is restarted with the usual backoff: a hung stdio
	// server, or a remote one whose connection dropped, is noticed before
	// the next request. Only protocol versions before 2026-07-28 have ping.
	KeepAlive time.Duration
	// StderrBytes is how much of each server's stderr Log keeps (default
	// 64 KiB).
	StderrBytes int
	// LogMaxSize caps each generation of a server's stderr log
	// (StateDir/logs/NAME.log), rotated while it is written; LogKeep is how
	// many older generations are kept (defaults 1 MiB and 3: at most 4 MiB
	// per server, whatever it writes).
	LogMaxSize int64
	LogKeep    int
	// MaxInFlight bounds a server's requests to Rootkeeper being answered
	// at once (default 4), for roots/list and for the rest (sampling,
	// elicitation, ping) separately; RequestsPerSecond and RequestBurst
	// bound how fast the rest may come (defaults 5 and 10; roots/list may
	// come ten times as fast). Beyond a bound, a request is refused with
	// JSON-RPC error -32000 before it reaches a dialog or a provider.
	MaxInFlight       int
	RequestsPerSecond float64
	RequestBurst      int
	// Backlog bounds a stdio server's requests not yet answered, the
	// answers it has not read included: past its size its stdout is not
	// read until answers drain; full with none drained for its stall
	// limit, the server is stopped as hostile and stays stopped until
	// restarted (its status says why). Zero fields take BacklogLimits'
	// defaults.
	Backlog BacklogLimits
	// NoRestartOnEmpty keeps a server running when its visible set becomes
	// empty instead of restarting it. By default it is restarted, since some
	// servers (server-filesystem 2026.8.31) ignore an empty roots list and
	// keep the folders they had.
	NoRestartOnEmpty bool

	// Reviewer is the person in the loop of sampling (see SetReviewer,
	// which replaces it). Nil: nobody, and every sampling request is
	// rejected.
	Reviewer app.SamplingReviewer
	// SamplingTimeout bounds one call to the model provider (default 2
	// min); the reviews are bounded only by the server's request.
	SamplingTimeout time.Duration

	// NewTransport, when set, makes the transport of a server instead of the
	// built-in stdio, http and sse transports (tests use in-memory ones).
	NewTransport func(srv app.Server) (sdk.Transport, error)
	// WithoutReach turns off the observation of confined servers' reach
	// (ReachWatch): their attempts past their folders are then only
	// refused, never asked about.
	WithoutReach bool
	// CanAsk reports whether a person can be asked now (the app with its
	// window, or able to bring it up): a confined server's call past its
	// folders then waits for the answer (ReachWatch). nil: nobody can be
	// asked (headless), and such calls are refused at once.
	CanAsk func() bool
}

func (o *Options) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.BackoffMin, time.Second)
	def(&o.BackoffMax, 60*time.Second)
	def(&o.StableAfter, 30*time.Second)
	def(&o.ConnectTimeout, 30*time.Second)
	def(&o.DiscoverTimeout, 5*time.Second)
	def(&o.SettleTimeout, 3*time.Second)
	def(&o.StopGrace, 2*time.Second)
	def(&o.KillAfter, 5*time.Second)
	if o.KeepAlive == 0 {
		o.KeepAlive = 30 * time.Second
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 4
	}
	if o.RequestsPerSecond <= 0 {
		o.RequestsPerSecond = 5
	}
	if o.RequestBurst <= 0 {
		o.RequestBurst = 10
	}
	if o.StderrBytes <= 0 {
		o.StderrBytes = 64 << 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	o.samplingDefaults()
}

// Manager runs one MCP client per configured server and keeps each server's
// roots equal to its visible set. Create it with NewManager and start it with
// Run; Restart, Stop, Log and CallTool may be called from any goroutine.
type Manager struct {
	core  *app.Core
	opts  Options
	log   *slog.Logger
	audit *audit.Log // nil without a StateDir

	// visible is app.VisibleView (its lists are read, never changed);
	// tests replace it to make roots uncomputable.
	visible func(*app.Snapshot, string) []app.Root

	reviewer atomic.Pointer[reviewerBox] // the person in the loop of sampling
	http     *http.Client                // for the model provider

	mu       sync.Mutex
	adapters map[string]*adapter // the current adapter of each server
	wg       sync.WaitGroup      // every adapter, current or retiring

	// Adapters whose status changed since the last batch, and the signal
	// that wakes publishStatuses.
	statusMu    sync.Mutex
	statusDirty map[*adapter]struct{}
	statusWake  chan struct{}

	resourceListeners resourceListeners // see OnResourceEvent

	// encoded is the last list of roots encoded (Manager.encode).
	encodedMu sync.Mutex
	encoded   *encodedRoots

	reachLimit *app.ReachLimiter // the requests confined servers' reach raises
	netLimit   *app.ReachLimiter // the requests their networks raise
	reachRecs  Background        // those requests being written (ReachWatch.Pending)
}

// NewManager returns a manager for the servers configured in core.
func NewManager(core *app.Core, opts Options) *Manager {
	opts.setDefaults()
	m := &Manager{
		core:     core,
		opts:     opts,
		log:      opts.Logger,
		visible:  app.VisibleView,
		adapters: map[string]*adapter{},

		statusDirty: map[*adapter]struct{}{},
		statusWake:  make(chan struct{}, 1),
	}
	if opts.StateDir != "" {
		m.audit = audit.NewLog(opts.StateDir)
	}
	m.reachLimit = app.NewReachLimiter()
	m.netLimit = app.NewReachLimiter()
	m.http = &http.Client{Transport: http.DefaultTransport}
	m.SetReviewer(opts.Reviewer)
	return m
}

// Run connects every configured server in parallel and follows the core
// until ctx ends: servers added, removed or reconfigured are started,
// stopped or restarted; servers whose visible set changed are told. On
// return every server has been shut down.
func (m *Manager) Run(ctx context.Context) error {
	sig, unsubscribe := m.core.Subscribe()
	defer unsubscribe()
	prev := m.core.Snapshot()
	publisherDone := make(chan struct{})
	go func() { m.publishStatuses(ctx); close(publisherDone) }()
	m.reconcile(ctx, prev)
	for {
		select {
		case <-ctx.Done():
			<-publisherDone
			m.wg.Wait()
			m.reachRecs.Wait()
			FlushNetworkRecords(m.opts.StateDir)
			if m.audit != nil {
				if err := m.audit.Close(); err != nil {
					m.log.Error("the audit log's last entries were not written", "error", err)
				}
			}
			return nil
		case <-sig:
		}
		cur := m.core.Snapshot()
		if app.SameRule(prev, cur) {
			// Only live statuses or notices changed (most often our own
			// status updates): nothing visible can have moved.
			prev = cur
			continue
		}
		if !app.SameServers(prev.State.Servers, cur.State.Servers) {
			m.reconcile(ctx, cur)
		}
		for _, name := range app.Changed(prev, cur) {
			if a := m.adapter(name); a != nil {
				a.poke()
			}
		}
		for _, name := range app.NeedsChanged(prev, cur) {
			if a := m.adapter(name); a != nil {
				a.needsChanged()
			}
		}
		// A held server may start now, a running one may have to be
		// held, one waiting for its roots' checks may have them.
		m.mu.Lock()
		for _, a := range m.adapters {
			a.inputsChanged()
		}
		m.mu.Unlock()
		prev = cur
	}
}

// reconcile starts an adapter for each server without one, replaces those
// whose configuration changed, and retires those no longer configured.
func (m *Manager) reconcile(ctx context.Context, snap *app.Snapshot) {
	m.mu.Lock()
	defer m.mu.Unlock()
	want := map[string]bool{}
	for _, srv := range snap.State.Servers {
		want[srv.Name] = true
		old := m.adapters[srv.Name]
		if old != nil && (reflect.DeepEqual(old.cfg, srv) || app.SameRunButNetwork(old.cfg, srv)) {
			// The same, or a network widened: each contact is decided
			// as it is made, from the state.
			continue
		}
		if old != nil {
			m.log.Info("server reconfigured; restarting it", "server", srv.Name)
			old.retire()
		}
		a := newAdapter(m, srv)
		m.adapters[srv.Name] = a
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			a.run(ctx)
		}()
	}
	for name, a := range m.adapters {
		if want[name] {
			continue
		}
		m.log.Info("server removed; stopping it", "server", name)
		delete(m.adapters, name)
		a.retire()
		go func() {
			<-a.done
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.adapters[name] == nil {
				m.core.ClearServerStatus(name)
				// Its log, temp and data folders go with it, so that
				// the state folder holds only configured servers'.
				if err := app.RemoveServerFiles(m.opts.StateDir, name); err != nil {
					m.log.Warn("cannot remove all of a removed server's files", "server", name, "error", err)
				}
			}
		}()
	}
}

func (m *Manager) adapter(name string) *adapter {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.adapters[name]
}

// setStatus publishes st for a, unless a has been replaced or removed.
// statusChanged queues a's status for the next batch.
func (m *Manager) statusChanged(a *adapter) {
	m.statusMu.Lock()
	m.statusDirty[a] = struct{}{}
	m.statusMu.Unlock()
	select {
	case m.statusWake <- struct{}{}:
	default: // a batch is already due; it will take this one too
	}
}

// statusGather is how often statuses are published at most: a change
// after a quiet spell is published at once, those that follow within
// statusGather together at its end. A grant's answers to fifty servers
// come over 10-20 ms, and each publish copies the statuses and wakes every
// subscriber (the manager itself, the window, the tray, the app's link):
// thirty publishes a grant became two or three. A person does not see
// 25 ms.
const statusGather = 25 * time.Millisecond

// publishStatuses publishes the queued statuses, all in one snapshot, at
// most once every statusGather, until ctx ends.
func (m *Manager) publishStatuses(ctx context.Context) {
	gather := time.NewTimer(0)
	<-gather.C
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.statusWake:
		}
		if wait := statusGather - time.Since(last); wait > 0 {
			gather.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-gather.C:
			}
		}
		last = time.Now()
		m.statusMu.Lock()
		batch := make([]*adapter, 0, len(m.statusDirty))
		for a := range m.statusDirty {
			batch = append(batch, a)
		}
		clear(m.statusDirty)
		m.statusMu.Unlock()
		m.setStatuses(batch)
	}
}

// setStatuses publishes the current status of each adapter that still
// serves its server (a retired one must not overwrite its successor's).
func (m *Manager) setStatuses(adapters []*adapter) {
	m.mu.Lock()
	defer m.mu.Unlock()
	statuses := make(map[string]app.ServerStatus, len(adapters))
	for _, a := range adapters {
		if m.adapters[a.cfg.Name] == a {
			statuses[a.cfg.Name] = a.currentStatus()
		}
	}
	if len(statuses) > 0 {
		m.core.SetServerStatuses(statuses)
	}
}

// Restart stops the server called name (if running) and starts it again
// at once, without waiting for a backoff. Unknown names are ignored.
func (m *Manager) Restart(name string) {
	if a := m.adapter(name); a != nil {
		a.command(cmdRestart)
	}
}

// Stop stops the server called name until Restart is called for it (or
// its configuration changes).
func (m *Manager) Stop(name string) {
	if a := m.adapter(name); a != nil {
		a.command(cmdStop)
	}
}

// Log returns the recent stderr output of the server called name.
func (m *Manager) Log(name string) string {
	if a := m.adapter(name); a != nil {
		return a.stderr.String()
	}
	return ""
}

// CallTool calls a tool of a connected server. Input requests the server
// embeds in the result (SEP-2322) are fulfilled like any roots/list.
func (m *Manager) CallTool(ctx context.Context, server, tool string, args map[string]any) (*sdk.CallToolResult, error) {
	a := m.adapter(server)
	if a == nil {
		return nil, fmt.Errorf("no server %q", server)
	}
	cs := a.currentSession()
	if cs == nil {
		return nil, fmt.Errorf("server %q is not connected", server)
	}
	if args == nil {
		args = map[string]any{} // a nil map would go out as null
	}
	return cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
}

// Session returns the live session of a server, nil if it is not connected.
func (m *Manager) Session(server string) *sdk.ClientSession {
	if a := m.adapter(server); a != nil {
		return a.currentSession()
	}
	return nil
}

func (m *Manager) logPath(name string) string {
	if m.opts.StateDir == "" {
		return ""
	}
	return app.ServerLogPath(m.opts.StateDir, name)
}

var _ app.ServerController = (*Manager)(nil)
