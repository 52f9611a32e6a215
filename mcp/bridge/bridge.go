// Package bridge puts Rootkeeper in the path between an MCP host (Claude
// Code, Claude Desktop, Cursor, VS Code...) and a server the host would
// otherwise start itself. The host starts `rootkeeper bridge NAME`; the
// bridge starts server NAME and relays every message both ways, unchanged,
// except roots:
//
//	host ──stdin──> bridge ──stdin──> server
//	host <─stdout── bridge <─stdout── server
//	                  │  roots/list from the server: answered here (mcp.RootsAnswer)
//	                  │  the host's roots capability: rewritten; its list_changed: swallowed
//	                  │  roots/list to the host: its folders become requests (app.Request)
//	                  │  input requests for roots (2026-07-28): fulfilled here
//	                  └─ state file changes: notifications/roots/list_changed to the server
//
// A server that holds its roots from its start (roots mode args or env, or
// confined under Landlock) is started again when its visible set changes;
// the host keeps its session: its initialize is replayed to the new
// process, and the requests the old one had not answered get an error
// saying to send them again. A server reached over HTTP (streamable HTTP,
// or HTTP+SSE) is relayed the same way (http.go): the host still speaks
// stdio, and the server's replies and event streams become lines.
//
// It works from the state file alone (the app need not run): the caller
// gives it an app.Core that watches the file and the health monitor, so
// that only checked folders are shared. Decisions scoped until quit count
// only while an app is running. A change of the server's configuration
// ends the session. A server whose configuration names a folder not yet
// allowed is held: the host's initialize waits while a running app asks,
// or gets an error saying which folder and how to allow it.
//
// Where to look, one job a file:
//
//	bridge.go      Run: the session's parts, wired
//	server.go      the server process: held, started, started again, stopped
//	roots.go       the server's roots: answered by the one rule, followed
//	host.go        the host's messages: relayed, initialize and capabilities rewritten
//	hostroots.go   the host's own folders, turned into requests
//	fromserver.go  the server's messages: relayed, roots and input requests answered
//	framing.go     JSON-RPC lines, batches and error responses
//	wire.go        exact-key decoding of what the bridge decides on
//	ids.go         the ids of what passes untouched, read without decoding it
//	http.go        servers reached over streamable HTTP or SSE
//
// The host's and the server's pipes are read and written raw (package
// mcp/rawio): a call through the bridge costs it about two thread
// wake-ups, one a message.
package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/app/secrets"
	"rootkeeper/app/secrets/spot"
	"rootkeeper/mcp"
	"rootkeeper/mcp/rawio"
)

// Wire names the bridge looks for.
const (
	methodInitialize       = "initialize"
	methodInitialized      = "notifications/initialized"
	methodListRoots        = "roots/list"
	methodRootsListChanged = "notifications/roots/list_changed"
	metaCapabilities       = "io.modelcontextprotocol/clientCapabilities"
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	// inputRequestsSince is the first revision whose results may carry
	// input requests (SEP-2322).
	inputRequestsSince = "2026-07-28"
	// ownIDPrefix marks the ids of the bridge's own requests to the host.
	ownIDPrefix = "rootkeeper-bridge-"
	// maxLine bounds one message on every transport, as docs/using.md
	// promises and as the managed clients bound theirs
	// (mcp.MaxMessageBytes): a longer one is dropped and answered with an
	// error, and the session goes on (see lineReader.next).
	maxLine = mcp.MaxMessageBytes
	// maxHostRoots bounds how many of a host's folders are considered.
	maxHostRoots = 100
	// maxRounds bounds the input-request rounds of one request.
	maxRounds = 10
	// maxPending bounds the requests remembered for their input requests.
	maxPending = 1024
)

// Options configure Run.
type Options struct {
	// Core holds the state; the caller runs its file watcher.
	Core *app.Core
	// Server is the configured server to bridge.
	Server string
	// HostIn and HostOut are the host's side (stdin and stdout).
	HostIn  io.Reader
	HostOut io.Writer
	// Stderr is the host's stderr: the server's stderr is copied there, and
	// to Log.
	Stderr io.Writer
	// Log receives the server's stderr too (logs/NAME.log); nil: none.
	Log io.Writer
	// Audit records every roots answer; nil: none.
	Audit *audit.Log
	// AppRunning reports whether the app is running, so that decisions
	// scoped until quit count; nil: never.
	AppRunning func() bool
	// Logger receives the bridge's own log (to the host's stderr).
	Logger *slog.Logger
	// StopGrace is how long the server has to exit once its stdin is
	// closed before its process group gets SIGTERM (default 2 s);
	// KillAfter, after SIGTERM, SIGKILL (default 3 s).
	StopGrace, KillAfter time.Duration
	// StateDir is the state folder: a confined server's private temp
	// folder is there.
	StateDir string
	// OnSession, when set, is told about the session whenever what it shows
	// changes (host, protocol version, pid, last roots sent, held).
	OnSession func(Session)
	// HoldWait bounds how long a held server (a slot of its configuration
	// undecided, see app.HoldOf) waits for the person's answer while the
	// app runs and asks; the host's initialize waits with it. Then, or at
	// once when no app is running to ask, the host's requests get an error
	// naming the folder and the command that allows it (default 25 s:
	// within the start-up time hosts give a server).
	HoldWait time.Duration
	// SettleTimeout bounds how long a server that holds its roots from its
	// start (confined, roots mode args or env) waits for its roots' access
	// checks before it is started anyway (default 3 s).
	SettleTimeout time.Duration
	// WithoutReach turns off the observation of a confined server's reach
	// (see confineObserved).
	WithoutReach bool
	// CanAsk reports whether a person can be asked now: the app runs and
	// can bring its window up. A held server's host and a confined
	// server's call past its folders then wait for the answer; otherwise
	// they are answered at once. nil: nobody can be asked.
	CanAsk func() bool
	// Backlog bounds a stdio server's requests the bridge answers that
	// it has not read the answers of, as for the managed clients: while
	// full, its stdout is not read; full with none drained for the stall
	// limit, the server is stopped as hostile and the bridge ends, saying
	// so. Zero fields take mcp.BacklogLimits' defaults.
	Backlog mcp.BacklogLimits
}

// Session is what a bridge shows of itself.
type Session = app.BridgeSession

// bridge is one session: one host, and one server process at a time (the
// server is started again when what it was started with no longer holds).
type bridge struct {
	o   Options
	srv app.Server
	log *slog.Logger
	// hider takes the secrets srv was started with out of what the bridge
	// prints, logs and sends the host, and out of the server's stderr.
	hider *spot.Hider

	host *lineWriter // to the host

	nextID atomic.Int64
	poked  chan struct{} // followState has something to look at
	ended  chan error    // the current server process exited by itself

	// rmu orders the host's messages with restarts: a message from the host
	// is rewritten and written to the current process under RLock, a
	// restart swaps the process (and replays initialize) under Lock.
	rmu      sync.RWMutex
	cur      *serverProc
	stopping bool // the bridge is ending: no more restarts

	// reachRecs are the reach requests being written for a person who is
	// not there (mcp.ReachWatch.Pending): Run waits for them.
	reachRecs mcp.Background

	mu              sync.Mutex
	hostRootsCap    bool     // the host declared roots
	hostRoots       []string // the host's folders, canonical
	ownPending      map[string]bool
	pending         map[string]*pendingRequest // host requests that may get input requests, by id
	inflight        map[string]struct{}        // ids of host requests not answered yet (restartable servers only)
	stash           map[string]json.RawMessage // roots input responses held for a retry, by requestState
	initMsg         json.RawMessage            // the host's initialize as the server got it, to replay
	initialized     bool                       // the host sent notifications/initialized
	serverReady     bool                       // the server may be told of changes
	session         Session
	lastVisible     []string // what the server was last given
	lastVisibleInit bool
	restarts        int
}

// pendingRequest is a host request that the server may answer with input
// requests (2026-07-28): kept to re-send it with the roots answer.
type pendingRequest struct {
	method string
	params json.RawMessage
	rounds int
}

// Run bridges the host to server Options.Server until the host closes its
// side (stdin EOF), the server exits, or ctx ends. It returns nil on a clean
// end.
func Run(ctx context.Context, o Options) error {
	o = o.withDefaults()
	// A pipe or a socket is read and written raw (package rawio).
	var endHost func()
	o.HostIn, o.HostOut, endHost = rawio.Stdio(o.HostIn, o.HostOut)
	defer endHost()
	b, err := newBridge(o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer mcp.FlushNetworkRecords(o.StateDir)
	defer b.reachRecs.Wait()
	p, err := b.startFirst(ctx)
	if err != nil {
		return b.refuseAll(err)
	}
	b.cur = p
	b.log.Info("bridging", "pid", p.pid, "command", b.srv.Command, "url", b.hider.Hide(b.srv.URL))

	hostDone := make(chan error, 1)
	go func() { hostDone <- b.fromHost(o.HostIn) }()
	go b.followState(ctx)
	result := b.waitForEnd(ctx, hostDone)
	b.rmu.Lock()
	b.stopping = true
	p = b.cur
	b.rmu.Unlock()
	b.stop(p)
	return result
}

// withDefaults is o with its zero fields given their defaults.
func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 2 * time.Second
	}
	if o.KillAfter <= 0 {
		o.KillAfter = 3 * time.Second
	}
	if o.CanAsk == nil {
		o.CanAsk = func() bool { return false }
	}
	if o.AppRunning == nil {
		o.AppRunning = func() bool { return false }
	}
	if o.HoldWait <= 0 {
		o.HoldWait = 25 * time.Second
	}
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = 3 * time.Second
	}
	return o
}

// newBridge is the session for server o.Server as the state has it now,
// the secrets it refers to taken out of the keyring.
func newBridge(o Options) (*bridge, error) {
	snap := o.Core.Snapshot()
	srv, ok := snap.State.Server(o.Server)
	if !ok {
		return nil, &app.InputError{Msg: fmt.Sprintf("no server %q", o.Server)}
	}
	// Secrets the state file refers to come out of the keyring now.
	srv, hider, err := secrets.ResolveHiding(srv)
	if err != nil {
		return nil, err
	}
	return &bridge{
		o: o, srv: srv, log: o.Logger.With("server", srv.Name), hider: hider,
		host:       newLineWriter(o.HostOut),
		poked:      make(chan struct{}, 1),
		ended:      make(chan error, 1),
		ownPending: map[string]bool{},
		pending:    map[string]*pendingRequest{},
		inflight:   map[string]struct{}{},
		stash:      map[string]json.RawMessage{},
		session:    Session{ID: os.Getpid(), Server: srv.Name, LastSent: []string{}},
	}, nil
}

// startFirst starts the session's first server process: a stdio server
// once it may start (waitToStart), a server reached over HTTP at once.
func (b *bridge) startFirst(ctx context.Context) (*serverProc, error) {
	if b.srv.Type != app.TransportStdio {
		return b.startHTTP(ctx)
	}
	if err := b.waitToStart(ctx); err != nil {
		return nil, err
	}
	return b.startProc(b.snapshot())
}

// waitForEnd waits until the host is gone (hostDone), the server exits by
// itself, or ctx ends, and returns why the bridge ends: nil unless the
// server exited with an error, which it names (its secrets hidden).
func (b *bridge) waitForEnd(ctx context.Context, hostDone <-chan error) error {
	select {
	case err := <-hostDone:
		// The host is gone: let the server finish, then end it.
		if err != nil {
			b.log.Warn("reading from the host failed", "error", err)
		}
	case err := <-b.ended:
		var result error
		if err != nil {
			if mcp.IsHostile(err) {
				// Rootkeeper's own words, kept as the error they are.
				result = fmt.Errorf("server %q: %w", b.srv.Name, err)
			} else {
				result = fmt.Errorf("server %q: %s", b.srv.Name, b.hider.Hide(err.Error()))
			}
		}
		b.rmu.RLock()
		p := b.cur
		b.rmu.RUnlock()
		b.confineFailed(p)
		return result
	case <-ctx.Done():
	}
	return nil
}
