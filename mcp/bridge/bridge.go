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
// ends the session.
package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/app/secrets"
	"rootkeeper/app/secrets/spot"
	"rootkeeper/mcp"
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
	// maxLine bounds one message on every transport, as the README
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
	// (see confineObserved); ReachWait bounds how long its call past its
	// folders waits for an answer (default app.ReachWait).
	WithoutReach bool
	ReachWait    time.Duration
}

// Session is what a bridge shows of itself.
type Session = app.BridgeSession

// bridge is one session: one host, and one server process at a time (the
// server is started again when what it was started with no longer holds).
type bridge struct {
	o   Options
	srv app.Server
	log *slog.Logger

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

	mu              sync.Mutex
	hostRootsCap    bool     // the host declared roots
	hostRoots       []string // the host's folders, canonical
	ownPending      map[string]bool
	pending         map[string]*pendingRequest // host requests that may get input requests, by id
	inflight        map[string]json.RawMessage // host requests not answered yet, by id (restartable servers only)
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
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 2 * time.Second
	}
	if o.KillAfter <= 0 {
		o.KillAfter = 3 * time.Second
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
	snap := o.Core.Snapshot()
	srv, ok := snap.State.Server(o.Server)
	if !ok {
		return &app.InputError{Msg: fmt.Sprintf("no server %q", o.Server)}
	}
	// Secrets the state file refers to come out of the keyring now.
	srv, rerr := secrets.ResolveServer(srv)
	if rerr != nil {
		return rerr
	}
	b := &bridge{
		o: o, srv: srv, log: o.Logger.With("server", srv.Name),
		host:       newLineWriter(o.HostOut),
		poked:      make(chan struct{}, 1),
		ended:      make(chan error, 1),
		ownPending: map[string]bool{},
		pending:    map[string]*pendingRequest{},
		inflight:   map[string]json.RawMessage{},
		stash:      map[string]json.RawMessage{},
		session:    Session{ID: os.Getpid(), Server: srv.Name, LastSent: []string{}},
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var p *serverProc
	var err error
	if srv.Type == app.TransportStdio {
		if err := b.waitToStart(ctx); err != nil {
			return b.refuseAll(err)
		}
		p, err = b.startProc(b.snapshot())
	} else {
		p, err = b.startHTTP(ctx)
	}
	if err != nil {
		return b.refuseAll(err)
	}
	b.cur = p
	b.log.Info("bridging", "pid", p.pid, "command", srv.Command, "url", spot.RedactURL(srv.URL))

	hostDone := make(chan error, 1)
	go func() { hostDone <- b.fromHost(o.HostIn) }()
	go b.followState(ctx)

	var result error
	select {
	case err := <-hostDone:
		// The host is gone: let the server finish, then end it.
		if err != nil {
			b.log.Warn("reading from the host failed", "error", err)
		}
	case err := <-b.ended:
		if err != nil {
			result = fmt.Errorf("server %q: %v", srv.Name, err)
		}
	case <-ctx.Done():
	}
	b.rmu.Lock()
	b.stopping = true
	p = b.cur
	b.rmu.Unlock()
	b.stop(p)
	return result
}

// lineSink takes messages for the server, one line each.
type lineSink interface {
	write(line []byte) error
	writeJSON(v any) error
}

// serverProc is one run of the server process, or the connection to a
// server reached over HTTP (no cmd then; halt ends it).
type serverProc struct {
	cmd   *exec.Cmd
	pid   int
	stdin io.WriteCloser
	halt  func()
	w     lineSink
	// paths are the roots it was started with: on its command line, in its
	// environment or in its Landlock ruleset (nil for a server that learns
	// them by roots/list alone).
	paths  []string
	exited chan struct{} // closed once it has exited and its output is read
	err    error         // why it exited, once exited is closed
	// replaced: a newer run took over; this one's output is dropped and its
	// exit does not end the bridge.
	replaced atomic.Bool
}

// restartable reports whether the server holds its roots from its start
// (roots mode args or env, or confined), so that a change of its visible
// set means starting it again.
func (b *bridge) restartable() bool {
	return b.srv.Type == app.TransportStdio && (b.srv.Mode() == app.RootsArgs || b.srv.Mode() == app.RootsEnv || b.srv.Confine)
}

// startPaths are the roots a server started now would hold from its start.
func (b *bridge) startPaths(snap *app.Snapshot) []string {
	switch {
	case b.srv.Mode() == app.RootsArgs || b.srv.Mode() == app.RootsEnv:
		return app.VisiblePaths(snap, b.srv.Name)
	case b.srv.Confine:
		return app.ReachPaths(snap, b.srv.Name, rootPaths(b.visible(snap, b.srv.Name)))
	}
	return nil
}

// waitToStart waits until the server may start. A server whose
// configuration names a folder not allowed is never started without it:
// while the app runs, the session shows as held (the app asks the person
// at once) and the host's initialize waits, up to HoldWait, for the
// answer; with no app to ask, or a folder denied, it returns at once the
// error the host's requests get. A server that holds its roots from its
// start then waits, up to SettleTimeout, for its roots' access checks, so
// that it starts once.
func (b *bridge) waitToStart(ctx context.Context) error {
	sig, unsub := b.o.Core.Subscribe()
	defer unsub()
	holdUntil := time.NewTimer(b.o.HoldWait)
	defer holdUntil.Stop()
	settle := time.NewTimer(b.o.SettleTimeout)
	defer settle.Stop()
	settled := !b.restartable()
	tick := time.NewTicker(time.Second) // the app may quit meanwhile
	defer tick.Stop()
	asked := false
	for {
		snap := b.snapshot()
		h := app.HoldOf(snap, b.srv.Name)
		if h == nil {
			if asked {
				b.mu.Lock()
				b.session.Held = ""
				b.mu.Unlock()
				b.publish()
			}
			if settled || app.RootsChecked(snap, b.srv.Name) {
				return nil
			}
		} else {
			if !h.Waiting() || !b.o.AppRunning() {
				return b.holdError(h)
			}
			if !asked {
				asked = true
				b.log.Info("server held: waiting for the person's decision", "hold", h.Text(""))
				b.mu.Lock()
				b.session.Held = h.Text("")
				b.mu.Unlock()
				b.publish()
				b.askAgain(h)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-sig:
		case <-tick.C:
		case <-settle.C:
			settled = true
		case <-holdUntil.C:
			if h := app.HoldOf(b.snapshot(), b.srv.Name); h != nil {
				return b.holdError(h)
			}
		}
	}
}

// holdError is what the host's requests get when the server is held.
func (b *bridge) holdError(h *app.Hold) error {
	return fmt.Errorf("rootkeeper bridge: server %q is not started: %s", b.srv.Name, h.Text(""))
}

// askAgain refreshes the requests for the undecided slots, so that a
// running app asks about them now even if the person put them off before.
func (b *bridge) askAgain(h *app.Hold) {
	err := b.o.Core.Update(func(s *app.State) error {
		for _, p := range h.Undecided {
			s.TouchRequest(b.srv.Name, p, time.Now().UTC())
		}
		return nil
	})
	if err != nil {
		b.log.Warn("cannot record the request", "error", err)
	}
}

func rootPaths(roots []app.Root) []string {
	out := []string{}
	for _, r := range roots {
		out = append(out, r.Path)
	}
	return out
}

// startProc starts the server under snap: its stdout is read by fromServer,
// its stderr copied to the host's stderr and the log. A server that cannot
// start gives an error naming its command.
func (b *bridge) startProc(snap *app.Snapshot) (*serverProc, error) {
	cmd, paths := mcp.StdioCommand(b.srv, snap)
	observe := func() {}
	if b.srv.Confine {
		paths = b.startPaths(snap)
		var err error
		if observe, err = b.confineObserved(cmd, paths); err != nil {
			return nil, fmt.Errorf("rootkeeper bridge: server %q (%s): %v", b.srv.Name, cmd.Path, err)
		}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Stdout is a pipe of our own, not StdoutPipe: Wait must not close it
	// before everything the server wrote has been relayed.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = outW
	stderr := []io.Writer{b.o.Stderr}
	if b.o.Log != nil {
		stderr = append(stderr, b.o.Log)
	}
	cmd.Stderr = io.MultiWriter(stderr...)
	cmd.WaitDelay = b.o.StopGrace + b.o.KillAfter + time.Second
	err = cmd.Start()
	observe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("rootkeeper bridge: cannot start server %q (%s): %v", b.srv.Name, cmd.Path, err)
	}
	outW.Close()
	p := &serverProc{cmd: cmd, pid: cmd.Process.Pid, stdin: stdin, w: newLineWriter(stdin), paths: paths, exited: make(chan struct{})}
	read := make(chan struct{})
	go func() {
		defer close(read)
		b.fromServer(p, outR)
	}()
	go func() {
		err := cmd.Wait()
		// What it wrote before exiting is relayed; a descendant holding
		// its stdout open does not hold the bridge.
		select {
		case <-read:
		case <-time.After(time.Second):
		}
		outR.Close()
		p.err = err
		close(p.exited)
		if !p.replaced.Load() {
			if err == nil {
				err = errors.New("the server exited")
			}
			select {
			case b.ended <- err:
			default:
			}
		}
	}()
	b.mu.Lock()
	b.session.PID = cmd.Process.Pid
	b.mu.Unlock()
	if m := b.srv.Mode(); m == app.RootsArgs || m == app.RootsEnv {
		b.recordStart(paths)
	}
	b.publish()
	return p, nil
}

// confine wraps cmd to run under Landlock with read-write access to paths
// only (mcp.ConfineCommand, as for the managed clients).
func (b *bridge) confine(cmd *exec.Cmd, paths []string) error {
	_, err := mcp.ConfineCommand(cmd, b.srv, paths, b.o.StateDir)
	return err
}

// recordStart audits the roots an args or env server is started with, as
// the managed clients do.
func (b *bridge) recordStart(paths []string) {
	via := audit.ViaArgs
	if b.srv.Mode() == app.RootsEnv {
		via = audit.ViaEnv
	}
	e := audit.Entry{Time: time.Now().UTC(), Server: b.srv.Name, Via: via, Roots: []string{}}
	for _, p := range paths {
		e.Roots = append(e.Roots, app.URIFromPath(p))
	}
	if b.o.Audit != nil {
		if err := b.o.Audit.Append(e); err != nil {
			b.log.Error("cannot write the audit log", "error", err)
		}
	}
	b.mu.Lock()
	b.session.LastSent, b.session.LastSentAt = e.Roots, e.Time
	b.mu.Unlock()
}

// restart starts the server again because what it holds from its start no
// longer is what it may see: the new process gets the host's initialize
// (and initialized) replayed, its answer kept from the host; the host's
// requests the old one had not answered get an error saying to send them
// again; the old process is ended, at once (SIGKILL to its group) when it
// lost a folder, else with the grace of a stop. If the new one cannot
// start, the bridge ends: the old one must not keep roots it lost.
func (b *bridge) restart() {
	b.rmu.Lock()
	if b.stopping {
		b.rmu.Unlock()
		return
	}
	old := b.cur
	snap := b.snapshot()
	want := b.startPaths(snap)
	if slices.ContainsFunc(old.paths, func(p string) bool { return !slices.Contains(want, p) }) {
		// It lost a folder: it can reach it (on its command line, in its
		// ruleset) until it exits, so it gets no grace.
		old.replaced.Store(true)
		mcp.Group(old.pid).Kill()
	}
	p, err := b.startProc(snap)
	if err != nil {
		b.rmu.Unlock()
		b.log.Error("cannot start the server again", "error", err)
		select {
		case b.ended <- err:
		default:
		}
		return
	}
	old.replaced.Store(true)
	b.cur = p
	b.mu.Lock()
	init, initialized := b.initMsg, b.initialized
	unanswered := b.inflight
	b.inflight = map[string]json.RawMessage{}
	clear(b.pending)
	clear(b.stash)
	b.lastVisible, b.lastVisibleInit = nil, false
	b.restarts++
	n := b.restarts
	b.mu.Unlock()
	if init != nil {
		p.w.write(withID(init, fmt.Sprintf("%sinit-%d", ownIDPrefix, n)))
		if initialized {
			p.w.writeJSON(map[string]any{"jsonrpc": "2.0", "method": methodInitialized})
		}
	}
	b.rmu.Unlock()
	b.log.Info("server started again: its roots changed", "pid", p.pid, "roots", p.paths)
	for _, id := range unanswered {
		b.host.writeJSON(errorResponse(id, &jsonrpc.Error{Code: mcp.CodeInternalError,
			Message: fmt.Sprintf("rootkeeper bridge: server %q was started again because its roots changed; send the request again", b.srv.Name)}))
	}
	go b.stop(old)
}

// withID returns the request raw with its id replaced.
func withID(raw json.RawMessage, id string) json.RawMessage {
	var msg map[string]json.RawMessage
	if json.Unmarshal(raw, &msg) != nil {
		return raw
	}
	msg["id"], _ = json.Marshal(id)
	out, _ := json.Marshal(msg)
	return out
}

// stop ends a server process as the managed clients do (mcp.StopProcess):
// its stdin is closed; after StopGrace its process group gets SIGTERM,
// after KillAfter SIGKILL; whatever it left in its group goes with it.
func (b *bridge) stop(p *serverProc) {
	if p.halt != nil {
		p.halt()
		select {
		case <-p.exited:
		case <-time.After(b.o.StopGrace):
		}
		return
	}
	mcp.StopProcess(func() { p.stdin.Close() }, p.exited, mcp.Group(p.pid), b.o.StopGrace, b.o.KillAfter)
}

// refuseAll answers every request of the host with err, until the host
// closes its side: a host that cannot have its server at least learns why
// (its initialize fails with a message naming the command).
func (b *bridge) refuseAll(err error) error {
	b.log.Error(err.Error())
	r := newLineReader(b.o.HostIn)
	for {
		line, rerr := r.next()
		if rerr != nil {
			return err
		}
		for _, m := range splitBatch(line) {
			var h header
			if json.Unmarshal(m, &h) != nil || h.Method == "" || len(h.ID) == 0 {
				continue
			}
			b.host.writeJSON(errorResponse(h.ID, &jsonrpc.Error{Code: mcp.CodeInternalError, Message: err.Error()}))
		}
	}
}

// header is the part of a message the bridge reads.
type header struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

func (h header) isRequest() bool      { return h.Method != "" && len(h.ID) > 0 }
func (h header) isNotification() bool { return h.Method != "" && len(h.ID) == 0 }
func (h header) isResponse() bool     { return h.Method == "" && len(h.ID) > 0 }

// snapshot is the state the rule is applied to: the core's, without the
// until-quit decisions when no app is running.
func (b *bridge) snapshot() *app.Snapshot {
	snap := b.o.Core.Snapshot()
	if !b.o.AppRunning() {
		snap = app.WithoutUntilQuit(snap)
	}
	return snap
}

// visible is the one rule for this session.
func (b *bridge) visible(snap *app.Snapshot, server string) []app.Root {
	b.mu.Lock()
	host := slices.Clone(b.hostRoots)
	b.mu.Unlock()
	return app.VisibleFor(snap, server, host)
}

// answerRoots answers the server's roots request, records it, and returns
// the result or the error.
func (b *bridge) answerRoots(via string) (*jsonrpc.Error, json.RawMessage) {
	roots, jerr := mcp.RootsAnswer(b.snapshot(), b.srv.Name, b.visible)
	b.mu.Lock()
	version := b.session.ProtocolVersion
	b.mu.Unlock()
	e := mcp.AnswerEntry(b.srv.Name, version, via, roots, jerr)
	if b.o.Audit != nil {
		if err := b.o.Audit.Append(e); err != nil {
			b.log.Error("cannot write the audit log", "error", err)
		}
	}
	if jerr != nil {
		return jerr, nil
	}
	b.mu.Lock()
	b.session.LastSent, b.session.LastSentAt = e.Roots, e.Time
	b.lastVisible, b.lastVisibleInit = rootPaths(roots), true
	b.mu.Unlock()
	b.publish()
	data, _ := json.Marshal(mcp.RootsResult(roots))
	return nil, data
}

func (b *bridge) publish() {
	if b.o.OnSession == nil {
		return
	}
	b.mu.Lock()
	s := b.session
	s.LastSent = slices.Clone(s.LastSent)
	s.HostRoots = slices.Clone(b.hostRoots)
	b.mu.Unlock()
	b.o.OnSession(s)
}

// followState tells the server when its visible set changes, or starts
// it again when it holds its roots from its start.
func (b *bridge) followState(ctx context.Context) {
	sig, unsub := b.o.Core.Subscribe()
	defer unsub()
	tick := time.NewTicker(5 * time.Second) // the app may start or quit
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
		case <-b.poked:
		case <-tick.C:
		}
		b.follow()
	}
}

// sameRun reports whether a and b run the same program the same way and
// give it its roots the same way (sampling and host-roots modes are read
// live, and may differ).
func sameRun(a, b app.Server) bool {
	a.Sampling, b.Sampling = "", ""
	a.HostRoots, b.HostRoots = "", ""
	a.KeepArgs, b.KeepArgs = nil, nil
	return reflect.DeepEqual(a, b)
}

// poke has followState look at the state again (from the host's reader,
// which must not restart the server itself).
func (b *bridge) poke() {
	select {
	case b.poked <- struct{}{}:
	default:
	}
}

// follow brings the server up to date with its visible set: a server that
// holds its roots from its start is started again when they changed; one
// in roots mode protocol gets notifications/roots/list_changed when its set
// differs from what it was last given.
func (b *bridge) follow() {
	snap := b.snapshot()
	if now, ok := snap.State.Server(b.srv.Name); !ok || !sameRun(now, b.srv) {
		// What runs, or how it learns its roots, is not what this session
		// started: it ends, and the host starts the new one.
		b.log.Warn("the server was changed or removed in Rootkeeper: ending this session; start it again to use the new configuration")
		select {
		case b.ended <- fmt.Errorf("server %q was changed or removed in Rootkeeper", b.srv.Name):
		default:
		}
		return
	}
	if h := app.HoldOf(snap, b.srv.Name); h != nil {
		// A folder its configuration names is no longer allowed: it must
		// not keep reaching it. The session ends; the host's next start
		// is held.
		b.rmu.RLock()
		p := b.cur
		b.rmu.RUnlock()
		p.replaced.Store(true)
		if p.cmd != nil {
			mcp.Group(p.pid).Kill()
		} else if p.halt != nil {
			p.halt()
		}
		b.log.Warn("a folder of the server's configuration is no longer allowed: stopping it", "hold", h.Text(""))
		select {
		case b.ended <- b.holdError(h):
		default:
		}
		return
	}
	if b.restartable() {
		b.rmu.RLock()
		started := b.cur.paths
		b.rmu.RUnlock()
		if want := b.startPaths(snap); !slices.Equal(want, started) && !(len(want) == 0 && len(started) == 0) {
			b.restart()
			return
		}
	}
	if b.srv.Mode() != app.RootsProtocol {
		return
	}
	paths := rootPaths(b.visible(snap, b.srv.Name))
	b.mu.Lock()
	// A server that never asked has nothing to be told: it asks when it
	// wants them.
	changed := b.lastVisibleInit && !slices.Equal(paths, b.lastVisible)
	ready := b.serverReady
	if changed && ready {
		b.lastVisible = paths
	}
	b.mu.Unlock()
	if changed && ready {
		b.rmu.RLock()
		p := b.cur
		b.rmu.RUnlock()
		p.w.writeJSON(map[string]any{"jsonrpc": "2.0", "method": methodRootsListChanged})
	}
}

// fromHost relays the host's messages to the server until EOF.
func (b *bridge) fromHost(in io.Reader) error {
	r := newLineReader(in)
	for {
		line, err := r.next()
		var long *tooLongError
		if errors.As(err, &long) {
			b.rmu.RLock()
			b.refuseTooLong(long, b.host, b.cur.w, "the host")
			b.rmu.RUnlock()
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		b.rmu.RLock()
		out := b.hostMessage(line)
		if out != nil && b.restartable() {
			b.noteRequests(out)
		}
		p := b.cur
		if out != nil {
			err = p.w.write(out)
		}
		b.rmu.RUnlock()
		if err != nil && !p.replaced.Load() {
			return err
		}
	}
}

// noteRequests remembers the requests of a line the server is about to
// get, so that a restart can tell the host which ones to send again.
func (b *bridge) noteRequests(line []byte) {
	t := bytes.TrimSpace(line)
	if len(t) > 0 && t[0] == '[' {
		for _, m := range splitBatch(t) {
			b.noteRequests(m)
		}
		return
	}
	if id, ok := requestID(t); ok {
		b.mu.Lock()
		if len(b.inflight) < 10_000 {
			b.inflight[string(id)] = id
		}
		b.mu.Unlock()
	}
}

// requestID returns the id of a request (a message with a method and an
// id), reading no more of it than it must.
func requestID(msg []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var id json.RawMessage
	method := false
	for dec.More() && (id == nil || !method) {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		switch tok {
		case "id":
			if dec.Decode(&id) != nil {
				return nil, false
			}
		case "method":
			method = true
			fallthrough
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil, false
			}
		}
	}
	if !method || id == nil || string(id) == "null" {
		return nil, false
	}
	return id, true
}

// hostMessage rewrites (or drops, returning nil) one line from the host.
func (b *bridge) hostMessage(line []byte) []byte {
	// Most messages need nothing: pass them without decoding them.
	if !bytes.Contains(line, []byte(methodInitialize)) && !bytes.Contains(line, []byte("roots")) &&
		!bytes.Contains(line, []byte(metaCapabilities)) && !bytes.Contains(line, []byte("inputResponses")) &&
		!bytes.Contains(line, []byte(ownIDPrefix)) && !b.trackable(line) && !disguised(line) {
		return line
	}
	return mapBatch(line, b.hostOne)
}

// trackable reports whether line may be a request whose result can carry
// input requests (2026-07-28 on), which the bridge must remember. Sessions
// of earlier revisions have none: their requests, large ones included,
// pass without being decoded.
func (b *bridge) trackable(line []byte) bool {
	if !bytes.Contains(line, []byte(`"tools/call"`)) && !bytes.Contains(line, []byte(`"prompts/get"`)) &&
		!bytes.Contains(line, []byte(`"resources/read"`)) {
		return false
	}
	b.mu.Lock()
	version := b.session.ProtocolVersion
	b.mu.Unlock()
	return version == "" || version >= inputRequestsSince || bytes.Contains(line, []byte(metaProtocolVersion))
}

// hostOne handles one message from the host; nil drops it.
func (b *bridge) hostOne(raw json.RawMessage) json.RawMessage {
	h, err := parseHeader(raw)
	if errors.Is(err, errAmbiguous) {
		b.refuseAmbiguous(raw, b.host, nil, "the host")
		return nil
	}
	if err != nil {
		return raw // not ours to judge: the server answers it
	}
	switch {
	case h.isResponse() && isOwnID(h.ID):
		b.hostRootsAnswer(h)
		return nil
	case h.Method == methodRootsListChanged:
		// The host's folders changed: ask for them again; the server is not
		// told (its roots are Rootkeeper's).
		b.askHostRoots()
		return nil
	case h.Method == methodInitialize:
		return b.hostInitialize(raw, h)
	case h.Method == methodInitialized:
		b.mu.Lock()
		b.serverReady, b.initialized = true, true
		ask := b.hostRootsCap
		b.mu.Unlock()
		if ask {
			defer b.askHostRoots()
		}
		return raw
	}
	if h.isRequest() {
		raw = b.rewriteMeta(raw, h)
		var ok bool
		if raw, ok = b.dropHostRoots(raw); !ok {
			b.refuseAmbiguous(raw, b.host, nil, "the host")
			return nil
		}
		if h, err = parseHeader(raw); err != nil {
			return raw
		}
		switch h.Method {
		case "tools/call", "prompts/get", "resources/read":
			if b.trackable(raw) {
				raw = b.trackRequest(raw, h)
			}
		}
	}
	return raw
}

// hostInitialize remembers who the host is and whether it has roots, and
// rewrites its roots capability to Rootkeeper's.
func (b *bridge) hostInitialize(raw json.RawMessage, h header) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(h.Params, &p) != nil {
		return raw
	}
	var info struct{ Name, Version string }
	json.Unmarshal(p["clientInfo"], &info)
	var version string
	json.Unmarshal(p["protocolVersion"], &version)
	caps, declared := b.rewriteCaps(p["capabilities"])
	p["capabilities"] = caps
	b.mu.Lock()
	b.hostRootsCap = declared
	b.session.Host, b.session.HostVersion = shown(info.Name), shown(info.Version)
	if b.session.ProtocolVersion == "" {
		b.session.ProtocolVersion = shown(version)
	}
	b.mu.Unlock()
	b.publish()
	out := replaceParams(raw, p)
	b.mu.Lock()
	b.initMsg = out
	b.mu.Unlock()
	return out
}

// rewriteCaps returns the capabilities the server is shown: the host's,
// with roots replaced by Rootkeeper's (listChanged; none for rootsMode off,
// args or env), and whether the host declared roots.
func (b *bridge) rewriteCaps(raw json.RawMessage) (json.RawMessage, bool) {
	caps := map[string]json.RawMessage{}
	if len(raw) > 0 && json.Unmarshal(raw, &caps) != nil {
		caps = map[string]json.RawMessage{}
	}
	_, declared := caps["roots"]
	delete(caps, "roots")
	if b.srv.Mode() == app.RootsProtocol {
		caps["roots"] = json.RawMessage(`{"listChanged":true}`)
	}
	out, _ := json.Marshal(caps)
	return out, declared
}

// rewriteMeta rewrites the client capabilities a 2026-07-28 request carries
// in its _meta, as for initialize.
func (b *bridge) rewriteMeta(raw json.RawMessage, h header) json.RawMessage {
	if !bytes.Contains(h.Params, []byte(metaCapabilities)) {
		return raw
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(h.Params, &p) != nil {
		return raw
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(p["_meta"], &meta) != nil || meta == nil {
		return raw
	}
	caps, declared := b.rewriteCaps(meta[metaCapabilities])
	meta[metaCapabilities] = caps
	var version string
	json.Unmarshal(meta[metaProtocolVersion], &version)
	var info struct{ Name, Version string }
	json.Unmarshal(meta[metaClientInfo], &info)
	b.mu.Lock()
	b.hostRootsCap = b.hostRootsCap || declared
	if version != "" {
		b.session.ProtocolVersion = shown(version)
	}
	if info.Name != "" {
		b.session.Host, b.session.HostVersion = shown(info.Name), shown(info.Version)
	}
	b.serverReady = true // stateless: there is no initialize to wait for
	b.mu.Unlock()
	p["_meta"], _ = json.Marshal(meta)
	return replaceParams(raw, p)
}

// trackRequest remembers a request whose result may carry input requests,
// and adds the roots answers held for its requestState (a retry after the
// host answered the other input requests).
func (b *bridge) trackRequest(raw json.RawMessage, h header) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(h.Params, &p) != nil {
		return raw
	}
	var state string
	json.Unmarshal(p["requestState"], &state)
	b.mu.Lock()
	held, ok := b.stash[state]
	if ok {
		delete(b.stash, state)
	}
	if len(b.pending) >= maxPending {
		// A server that never answers does not grow this without end;
		// should it ask for roots in answer to one of those forgotten,
		// the host gets an error instead of the roots request.
		clear(b.pending)
	}
	b.pending[string(h.ID)] = &pendingRequest{method: h.Method, params: h.Params}
	b.mu.Unlock()
	if !ok {
		return raw
	}
	var responses map[string]json.RawMessage
	json.Unmarshal(p["inputResponses"], &responses)
	if responses == nil {
		responses = map[string]json.RawMessage{}
	}
	var ours map[string]json.RawMessage
	json.Unmarshal(held, &ours)
	for id, r := range ours {
		responses[id] = r
	}
	p["inputResponses"], _ = json.Marshal(responses)
	out := replaceParams(raw, p)
	var nh header
	json.Unmarshal(out, &nh)
	b.mu.Lock()
	b.pending[string(h.ID)] = &pendingRequest{method: h.Method, params: nh.Params}
	b.mu.Unlock()
	return out
}

// askHostRoots sends roots/list to the host; its answer comes back through
// hostRootsAnswer.
func (b *bridge) askHostRoots() {
	id := fmt.Sprintf("%s%d", ownIDPrefix, b.nextID.Add(1))
	b.mu.Lock()
	if len(b.ownPending) > 8 {
		b.mu.Unlock()
		return // a host that never answers does not collect questions
	}
	b.ownPending[id] = true
	b.mu.Unlock()
	b.host.writeJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": methodListRoots, "params": map[string]any{}})
}

func isOwnID(id json.RawMessage) bool {
	var s string
	return json.Unmarshal(id, &s) == nil && strings.HasPrefix(s, ownIDPrefix)
}

// hostRootsAnswer takes the host's folders from its roots/list answer: each
// becomes a request for the server (never shared by itself), and in
// host-roots mode follow they narrow what the session sees.
func (b *bridge) hostRootsAnswer(h header) {
	var id string
	json.Unmarshal(h.ID, &id)
	b.mu.Lock()
	delete(b.ownPending, id)
	host := b.session.Host
	if b.session.HostVersion != "" {
		host += " " + b.session.HostVersion
	}
	b.mu.Unlock()
	if len(h.Error) > 0 {
		return
	}
	var res struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	if json.Unmarshal(h.Result, &res) != nil {
		return
	}
	var folders []string
	for _, r := range res.Roots {
		if len(folders) == maxHostRoots {
			break
		}
		if p, ok := hostFolder(r.URI); ok && !slices.Contains(folders, p) {
			folders = append(folders, p)
		}
	}
	slices.Sort(folders)
	b.mu.Lock()
	b.hostRoots = folders
	b.mu.Unlock()
	b.publish()
	if host == "" {
		host = "the host"
	}
	now := time.Now().UTC()
	if len(folders) > 0 && b.wouldRecord(folders, app.SafeText(host), now) {
		err := b.o.Core.Update(func(s *app.State) error {
			for _, f := range folders {
				if _, err := s.AddRequest(b.srv.Name, f, app.SafeText(host), now); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.log.Warn("cannot record the host's folders as requests", "error", err)
		}
	}
	b.poke()
}

// wouldRecord reports whether recording folders as requests from host
// would change the state: a host that answers roots/list again and again
// does not get the state file written each time.
func (b *bridge) wouldRecord(folders []string, host string, now time.Time) bool {
	st := b.o.Core.Snapshot().State.Clone()
	for _, f := range folders {
		if changed, err := st.AddRequest(b.srv.Name, f, host, now); changed || err != nil {
			return true
		}
	}
	return false
}

// hostFolder turns a host's root URI into a canonical folder path, or
// reports that it is not one: only absolute file:// URIs of folders that
// exist count, with symlinks resolved and no "..".
func hostFolder(uri string) (string, bool) {
	if !strings.HasPrefix(uri, "file://") || strings.Contains(uri, "/../") || strings.HasSuffix(uri, "/..") {
		return "", false
	}
	p, err := app.PathFromURI(uri)
	if err != nil {
		return "", false
	}
	canon, _, err := app.CanonicalPath(p, "/")
	if err != nil {
		return "", false
	}
	return canon, true
}

// fromServer relays the messages of server process p to the host until
// EOF.
func (b *bridge) fromServer(p *serverProc, out io.Reader) {
	r := newLineReader(out)
	for {
		line, err := r.next()
		var long *tooLongError
		if errors.As(err, &long) {
			if !p.replaced.Load() {
				b.refuseTooLong(long, p.w, b.host, "the server")
			}
			continue
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !p.replaced.Load() {
				b.log.Warn("reading from the server failed", "error", err)
			}
			return
		}
		if msg := b.serverMessage(p, line); msg != nil {
			if err := b.host.write(msg); err != nil {
				return
			}
		}
	}
}

// serverMessage rewrites (or drops) one line from server process p.
func (b *bridge) serverMessage(p *serverProc, line []byte) []byte {
	if !bytes.Contains(line, []byte(methodListRoots)) && !mentionsInputRequests(line) &&
		!bytes.Contains(line, []byte(`"protocolVersion"`)) && !bytes.Contains(line, []byte(ownIDPrefix)) && !disguised(line) {
		if !b.settle(p, line) {
			return nil
		}
		return line
	}
	if p.replaced.Load() {
		return nil
	}
	return mapBatch(line, func(m json.RawMessage) json.RawMessage { return b.serverOne(p, m) })
}

// settle drops the pending and in-flight entries of the responses in a line
// that passes untouched. It reports false when p was replaced: its output
// is dropped (the host was told to send its requests again).
func (b *bridge) settle(p *serverProc, line []byte) bool {
	b.mu.Lock()
	n := len(b.pending) + len(b.inflight)
	b.mu.Unlock()
	if n == 0 {
		return !p.replaced.Load()
	}
	t := bytes.TrimSpace(line)
	var msgs []json.RawMessage
	if len(t) > 0 && t[0] == '[' {
		msgs = splitBatch(t)
	} else {
		msgs = []json.RawMessage{t}
	}
	var ids []json.RawMessage
	for _, m := range msgs {
		if id, ok := responseID(m); ok {
			ids = append(ids, id)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// Checked under mu: restart marks p replaced before it takes the
	// in-flight requests, so a response is either relayed here or answered
	// by restart, never both.
	if p.replaced.Load() {
		return false
	}
	for _, id := range ids {
		delete(b.pending, string(id))
		delete(b.inflight, string(id))
	}
	return true
}

// responseID returns the id of a response without decoding the whole of
// it: a megabyte result is not parsed to learn its id, which senders put
// before the result.
func responseID(msg []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var id json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		switch tok {
		case "method":
			return nil, false // a request or a notification
		case "id":
			if dec.Decode(&id) != nil {
				return nil, false
			}
			return id, true
		case "result", "error":
			// The id comes after the payload: read it the long way.
			var h header
			if json.Unmarshal(msg, &h) != nil || !h.isResponse() {
				return nil, false
			}
			return h.ID, true
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil, false
			}
		}
	}
	return nil, false
}

// serverOne handles one message from the server; nil drops it.
func (b *bridge) serverOne(p *serverProc, raw json.RawMessage) json.RawMessage {
	h, err := parseHeader(raw)
	if errors.Is(err, errAmbiguous) {
		b.refuseAmbiguous(raw, p.w, b.host, "the server")
		return nil
	}
	if err != nil {
		return raw
	}
	switch {
	case h.isRequest() && h.Method == methodListRoots:
		jerr, res := b.answerRoots(audit.ViaRootsList)
		if jerr != nil {
			p.w.writeJSON(errorResponse(h.ID, jerr))
		} else {
			p.w.writeJSON(map[string]any{"jsonrpc": "2.0", "id": h.ID, "result": res})
		}
		return nil
	case h.isResponse() && isOwnID(h.ID):
		// The answer to a replayed initialize: the host had its own.
		return nil
	case h.isResponse() && len(h.Result) > 0:
		var r struct {
			ProtocolVersion string
			InputRequests   map[string]json.RawMessage
			RequestState    string
		}
		f, err := fields(h.Result, "protocolVersion", "inputRequests", "requestState")
		if errors.Is(err, errAmbiguous) {
			return errorResponseRaw(h.ID, &jsonrpc.Error{Code: mcp.CodeInternalError, Message: "rootkeeper bridge: the server's result spells protocolVersion, inputRequests or requestState twice or in another case"})
		}
		json.Unmarshal(f["protocolVersion"], &r.ProtocolVersion)
		json.Unmarshal(f["inputRequests"], &r.InputRequests)
		json.Unmarshal(f["requestState"], &r.RequestState)
		if r.ProtocolVersion != "" {
			b.mu.Lock()
			b.session.ProtocolVersion = shown(r.ProtocolVersion)
			b.mu.Unlock()
			b.publish()
		}
		if len(r.InputRequests) > 0 {
			out := b.inputRequests(p, raw, h, r.InputRequests, r.RequestState)
			if out != nil { // the host gets an answer: no longer in flight
				b.mu.Lock()
				delete(b.inflight, string(h.ID))
				b.mu.Unlock()
			}
			return out
		}
	}
	if h.isResponse() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if p.replaced.Load() {
			return nil // restart answered it
		}
		delete(b.pending, string(h.ID))
		delete(b.inflight, string(h.ID))
	}
	return raw
}

// inputRequests fulfils the roots input requests of a result (SEP-2322)
// so that the host never sees nor answers them. With only roots asked for,
// the bridge sends the request again with the answer, and the host sees
// only the final result; with others too, the host gets the result without
// the roots requests, and its retry gets the roots answers added.
func (b *bridge) inputRequests(proc *serverProc, raw json.RawMessage, h header, reqs map[string]json.RawMessage, state string) json.RawMessage {
	var rootsIDs []string
	for id, r := range reqs {
		m, err := parseHeader(r)
		if errors.Is(err, errAmbiguous) {
			return errorResponseRaw(h.ID, &jsonrpc.Error{Code: mcp.CodeInternalError, Message: "rootkeeper bridge: an input request of the server spells its method twice or in another case"})
		}
		if err == nil && m.Method == methodListRoots {
			rootsIDs = append(rootsIDs, id)
		}
	}
	if len(rootsIDs) == 0 {
		return raw
	}
	b.mu.Lock()
	p := b.pending[string(h.ID)]
	b.mu.Unlock()
	if p == nil {
		// Not a request the bridge saw: nothing to re-send it with.
		return errorResponseRaw(h.ID, &jsonrpc.Error{Code: mcp.CodeInternalError, Message: "rootkeeper bridge: input requests for an unknown request"})
	}
	jerr, res := b.answerRoots(audit.ViaInputRequest)
	if jerr != nil {
		b.mu.Lock()
		delete(b.pending, string(h.ID))
		delete(b.inflight, string(h.ID))
		b.mu.Unlock()
		return errorResponseRaw(h.ID, jerr)
	}
	answers := map[string]json.RawMessage{}
	for _, id := range rootsIDs {
		answers[id] = res
	}
	if len(rootsIDs) == len(reqs) {
		p.rounds++
		if p.rounds > maxRounds {
			return errorResponseRaw(h.ID, &jsonrpc.Error{Code: mcp.CodeInternalError, Message: fmt.Sprintf("%s: the server still asks for input after %d rounds", p.method, maxRounds)})
		}
		var params map[string]json.RawMessage
		if json.Unmarshal(p.params, &params) != nil || params == nil {
			params = map[string]json.RawMessage{}
		}
		params["inputResponses"], _ = json.Marshal(answers)
		if state != "" {
			params["requestState"], _ = json.Marshal(state)
		} else {
			delete(params, "requestState")
		}
		retry, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": h.ID, "method": p.method, "params": params})
		proc.w.write(retry)
		return nil
	}
	// Mixed: the host answers the others; hold ours for its retry.
	var result map[string]json.RawMessage
	json.Unmarshal(h.Result, &result)
	others := map[string]json.RawMessage{}
	for id, r := range reqs {
		if !slices.Contains(rootsIDs, id) {
			others[id] = r
		}
	}
	result["inputRequests"], _ = json.Marshal(others)
	held, _ := json.Marshal(answers)
	b.mu.Lock()
	if len(b.stash) > 256 {
		clear(b.stash) // a server that never sees retries does not grow this
	}
	b.stash[state] = held
	delete(b.pending, string(h.ID))
	b.mu.Unlock()
	var msg map[string]json.RawMessage
	json.Unmarshal(raw, &msg)
	msg["result"], _ = json.Marshal(result)
	out, _ := json.Marshal(msg)
	return out
}

// replaceParams returns raw with its params replaced by p.
func replaceParams(raw json.RawMessage, p map[string]json.RawMessage) json.RawMessage {
	var msg map[string]json.RawMessage
	if json.Unmarshal(raw, &msg) != nil {
		return raw
	}
	msg["params"], _ = json.Marshal(p)
	out, err := json.Marshal(msg)
	if err != nil {
		return raw
	}
	return out
}

// wireError is a JSON-RPC error object, its fields in the usual order.
type wireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func errorResponse(id json.RawMessage, e *jsonrpc.Error) any {
	return struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{e.Code, e.Message, e.Data}}
}

func errorResponseRaw(id json.RawMessage, e *jsonrpc.Error) json.RawMessage {
	out, _ := json.Marshal(errorResponse(id, e))
	return out
}

// splitBatch returns the messages of a line: the elements of a batch, or
// the line itself.
func splitBatch(line []byte) []json.RawMessage {
	t := bytes.TrimSpace(line)
	if len(t) > 0 && t[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(t, &batch) == nil {
			return batch
		}
	}
	return []json.RawMessage{t}
}

// mapBatch applies one to each message of line (a batch or one message)
// and returns the line to send on: unchanged when nothing changed, nil
// when nothing is left.
func mapBatch(line []byte, one func(json.RawMessage) json.RawMessage) []byte {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || t[0] != '[' {
		out := one(t)
		if out == nil {
			return nil
		}
		return out
	}
	batch := splitBatch(t)
	var kept []json.RawMessage
	changed := false
	for _, m := range batch {
		out := one(m)
		if out == nil || !bytes.Equal(out, m) {
			changed = true
		}
		if out != nil {
			kept = append(kept, out)
		}
	}
	if !changed {
		return line
	}
	if len(kept) == 0 {
		return nil
	}
	out, _ := json.Marshal(kept)
	return out
}

// lineWriter writes whole lines, one writer at a time.
type lineWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func newLineWriter(w io.Writer) *lineWriter { return &lineWriter{w: bufio.NewWriterSize(w, 64<<10)} }

func (l *lineWriter) write(line []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(line); err != nil {
		return err
	}
	if err := l.w.WriteByte('\n'); err != nil {
		return err
	}
	return l.w.Flush()
}

func (l *lineWriter) writeJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return l.write(data)
}

// lineReader reads newline-delimited messages of up to maxLine bytes.
type lineReader struct{ r *bufio.Reader }

func newLineReader(r io.Reader) *lineReader { return &lineReader{r: bufio.NewReaderSize(r, 1<<20)} }

// next returns the next non-empty line, without its newline. A line
// longer than maxLine is read to its end and dropped, and next returns a
// *tooLongError holding its first bytes: the reader can go on.
func (l *lineReader) next() ([]byte, error) {
	for {
		var buf []byte
		for {
			chunk, err := l.r.ReadSlice('\n')
			if len(buf)+len(chunk) > maxLine {
				return nil, l.skip(append(buf, chunk...), err)
			}
			if err == bufio.ErrBufferFull {
				buf = append(buf, chunk...)
				continue
			}
			if buf == nil {
				buf = append([]byte(nil), chunk...)
			} else {
				buf = append(buf, chunk...)
			}
			if err != nil {
				if len(bytes.TrimSpace(buf)) > 0 && errors.Is(err, io.EOF) {
					return bytes.TrimRight(buf, "\r\n"), nil
				}
				return nil, err
			}
			break
		}
		buf = bytes.TrimRight(buf, "\r\n")
		if len(bytes.TrimSpace(buf)) > 0 {
			return buf, nil
		}
	}
}

// shown bounds and neutralises a name a host or server gave of itself
// (clientInfo, protocol version): it is shown in the app, in status, and
// written into requests.
func shown(s string) string {
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return app.SafeText(s)
}
