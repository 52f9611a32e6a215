package bridge

// The server process: started once what it may reach is known (held while a folder
// of its configuration waits for the person), started again when what it was
// started with no longer holds (the host's initialize replayed), stopped.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/app/secrets/spot"
	"rootkeeper/mcp"
	"rootkeeper/mcp/confine"
	"rootkeeper/mcp/rawio"
)

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
	// answers takes the bridge's answers to the server's own requests:
	// for a stdio server, an answerQueue bounding those it has not read.
	answers lineSink
	// paths are the roots it was started with: on its command line, in its
	// environment or in its Landlock ruleset (nil for a server that learns
	// them by roots/list alone).
	paths  []string
	exited chan struct{} // closed once it has exited and its output is read
	err    error         // why it exited, once exited is closed
	// replaced: a newer run took over; this one's output is dropped and its
	// exit does not end the bridge.
	replaced atomic.Bool
	// witness diagnoses a confined run's end (nil when unconfined).
	witness *mcp.RunWitness
	// obs observes a confined run (nil when unconfined): a grant reaches
	// the running server through it (confine.Observer.Extend).
	obs *confine.Observer
}

// restartable reports whether the server holds its roots from its start
// (roots mode args or env, or confined), so that a change of its visible
// set means starting it again.
func (b *bridge) restartable() bool {
	return b.srv.Type == app.TransportStdio && (b.srv.Mode() == app.RootsArgs || b.srv.Mode() == app.RootsEnv || mcp.RunsConfined(b.srv))
}

// startPaths are the roots a server started now would hold from its start.
func (b *bridge) startPaths(snap *app.Snapshot) []string {
	switch {
	case b.srv.Mode() == app.RootsArgs || b.srv.Mode() == app.RootsEnv:
		return app.VisiblePaths(snap, b.srv.Name)
	case mcp.RunsConfined(b.srv):
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
			if !h.Waiting() || !b.o.CanAsk() {
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
	run := confinedRun{observe: func() {}, paths: paths}
	if b.srv.Confine {
		var err error
		if run, err = b.confineRun(cmd, snap); err != nil {
			return nil, err
		}
	}
	// Pipes of our own, not StdinPipe and StdoutPipe: Wait must not close
	// stdout before everything the server wrote has been relayed, and the
	// bridge's ends are read and written raw (package rawio).
	stdin, inR, outR, outW, err := rawio.Pipes()
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	hidden := b.serverStderr(run.wit)
	cmd.Stderr = hidden
	cmd.WaitDelay = b.o.StopGrace + b.o.KillAfter + time.Second
	err = mcp.StartServer(cmd)
	run.observe()
	inR.Close()
	outW.Close()
	if err != nil {
		stdin.Close()
		outR.Close()
		return nil, fmt.Errorf("rootkeeper bridge: cannot start server %q (%s): %v", b.srv.Name, cmd.Path, err)
	}
	p := &serverProc{cmd: cmd, pid: cmd.Process.Pid, stdin: stdin, w: newLineWriter(stdin), paths: run.paths, exited: make(chan struct{}), witness: run.wit, obs: run.obs}
	b.serveProc(p, outR, hidden)
	b.mu.Lock()
	b.session.PID = cmd.Process.Pid
	b.mu.Unlock()
	if m := b.srv.Mode(); m == app.RootsArgs || m == app.RootsEnv {
		b.recordStart(run.paths)
	}
	b.publish()
	return p, nil
}

// confinedRun is how a server is started: observe is called once it has
// started (or failed to); obs observes its reach and wit diagnoses its end
// (both nil when it runs unconfined); paths are the roots it holds from its
// start.
type confinedRun struct {
	observe func()
	obs     *confine.Observer
	wit     *mcp.RunWitness
	paths   []string
}

// confineRun readies cmd, a server to be confined, to run under Landlock
// with the roots it would hold from its start, its reach observed. Where
// Landlock is missing, a server confined by default runs unconfined, as it
// would without Rootkeeper, and says so; one that must be confined is not
// started: the error names its command.
func (b *bridge) confineRun(cmd *exec.Cmd, snap *app.Snapshot) (confinedRun, error) {
	paths := b.startPaths(snap)
	wit := mcp.NewRunWitness()
	wit.Home = mcp.EnvHome(cmd.Env)
	switch observe, obs, err := b.confineObserved(cmd, paths, wit); {
	case err == nil:
		return confinedRun{observe: observe, obs: obs, wit: wit, paths: paths}, nil
	case app.RunsUnconfinedHere(b.srv, errors.Is(err, confine.ErrUnavailable)):
		// Confined by default where Landlock is missing: it runs as
		// it would without Rootkeeper, and says so.
		b.log.Warn("Landlock is missing here: the server runs unconfined; roots are advice to it", "why", err)
		return confinedRun{observe: func() {}}, nil
	default:
		return confinedRun{}, fmt.Errorf("rootkeeper bridge: server %q (%s): %v", b.srv.Name, cmd.Path, err)
	}
}

// serverStderr is where the server's stderr goes, its secrets hidden: the
// host's stderr, the log, and wit (nil: none), which reads in it why a
// confined run stopped.
func (b *bridge) serverStderr(wit *mcp.RunWitness) *spot.HidingWriter {
	stderr := []io.Writer{b.o.Stderr}
	if b.o.Log != nil {
		stderr = append(stderr, b.o.Log)
	}
	if wit != nil {
		// What it said, secrets hidden, tells why it stopped confined.
		stderr = append(stderr, wit)
	}
	return b.hider.Writer(io.MultiWriter(stderr...))
}

// serveProc serves p, just started: the bridge's answers to its requests
// are written through a queue that bounds those it has not read, its
// stdout is read by fromServer, and its exit is awaited (awaitExit).
func (b *bridge) serveProc(p *serverProc, stdout io.ReadCloser, stderr *spot.HidingWriter) {
	answers := newAnswerQueue(b.o.Backlog, func(err error) { b.hostile(p, err) })
	p.answers = answers
	go answers.run(p.w)
	read := make(chan struct{})
	go func() {
		defer close(read)
		b.fromServer(p, stdout)
		close(answers.lines)
	}()
	go b.awaitExit(p, stdout, stderr, answers, read)
}

// awaitExit waits for p to exit, then closes what served it (its stdin,
// its answers' queue, its stdout once what it wrote is relayed: read
// closed) and, unless a newer process took over, ends the bridge with why
// p exited.
func (b *bridge) awaitExit(p *serverProc, stdout io.Closer, stderr *spot.HidingWriter, answers *answerQueue, read <-chan struct{}) {
	err := p.cmd.Wait()
	stderr.Flush() // its stderr is all copied once Wait returns
	close(answers.gone)
	p.stdin.Close() // as StdinPipe's is once Wait returns
	// What it wrote before exiting is relayed; a descendant holding
	// its stdout open does not hold the bridge.
	select {
	case <-read:
	case <-time.After(time.Second):
	}
	stdout.Close()
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
}

// hostile stops server process p, found hostile: it asks and does not read
// its answers. Unless a newer process took over, the bridge ends with err,
// which the host's stderr shows (it is about this bridge's own server).
func (b *bridge) hostile(p *serverProc, err error) {
	b.log.Error("server stopped", "error", err)
	if !p.replaced.Load() {
		select {
		case b.ended <- err:
		default:
		}
	}
	mcp.Group(p.pid).Kill()
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
	b.inflight = map[string]struct{}{}
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
	for id := range unanswered {
		b.host.writeJSON(errorResponse(json.RawMessage(id), &jsonrpc.Error{Code: mcp.CodeInternalError,
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
	err = errors.New(b.hider.Hide(err.Error()))
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
