package mcp

// An adapter's life: held until its configuration's folders are allowed,
// started, connected, watched until it ends or is told to restart or stop,
// and started again with backoff when it fails.

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
	"rootkeeper/app/supervise"
)

// run connects, serves and reconnects until ctx ends or the adapter is
// retired, then shuts the server down.
func (a *adapter) run(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	a.cancel = cancel
	close(a.ctxReady)
	defer close(a.done)
	defer cancel()
	a.openLog()
	defer a.closeLog()
	a.publish.Store(true)
	defer func() {
		// The last word (stopped) is published at once. A batch still
		// pending reads the status when it runs, so it cannot undo this.
		a.publish.Store(false)
		a.publishNow()
	}()

	go a.syncRoots(ctx)
	a.poke()
	a.keepRunning(ctx)
	a.setState(app.ServerStopped, nil)
}

// keepRunning starts the server once it may start, watches that run until
// it ends, and starts it again until ctx ends: after the backoff when it
// failed, at once after a restart or a change, and only on a restart after
// Stop or a hostile run.
func (a *adapter) keepRunning(ctx context.Context) {
	failures := 0
	first := true
	stopped := false
	for {
		if stopped {
			a.setState(app.ServerStopped, nil)
			if !a.waitCommand(ctx, 0) {
				return
			}
			stopped = false
		}
		if !first {
			a.update(func(s *app.ServerStatus) { s.Restarts++ })
		}
		first = false
		if !a.waitToStart(ctx) {
			return
		}
		a.setState(app.ServerStarting, nil)
		cs, proc, err := a.connect(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			a.m.log.Warn("server failed to connect", "server", a.cfg.Name, "error", err)
			a.noteRunEnd()
			if !a.backOff(ctx, err, &failures, &stopped) {
				return
			}
			continue
		}
		began := time.Now()
		a.beginRun(cs, proc)
		end := a.watchRun(ctx, cs, proc)
		a.endRun(cs, proc, end)
		if ctx.Err() != nil {
			return
		}
		if !a.afterRun(ctx, end, began, &failures, &stopped) {
			return
		}
	}
}

// beginRun records that the server is connected (and, if confined, that
// it runs confined), then has it compared with the latest snapshot.
func (a *adapter) beginRun(cs *sdk.ClientSession, proc *process) {
	a.connected(cs, proc)
	if a.cfg.Confine {
		if err := ClearConfineFailure(a.m.core, a.cfg.Name); err != nil {
			a.m.log.Error("cannot record that the server runs confined", "server", a.cfg.Name, "error", err)
		}
	}
	a.poke() // compare what the server got with the latest snapshot
}

// runEnd says why a run of the server ended.
type runEnd struct {
	why     error      // it went away by itself: exited, or stopped answering
	hostile error      // it was found hostile: it asks and does not read
	cmd     adapterCmd // the command that ended it (0: none)
}

// watchRun watches a connected run until it ends: the server exits or
// stops answering pings, is found hostile, a command comes, a folder of its
// configuration is no longer allowed (cmdHold), or ctx ends.
func (a *adapter) watchRun(ctx context.Context, cs *sdk.ClientSession, proc *process) runEnd {
	exited := make(chan error, 1)
	go func() { exited <- cs.Wait() }()
	pingCtx, stopPing := context.WithCancel(ctx)
	unresponsive := make(chan error, 1)
	go a.keepAlive(pingCtx, cs, unresponsive)
	var hostileCh <-chan error
	if proc != nil {
		hostileCh = proc.hostile
	}
	var end runEnd
	for waiting := true; waiting; {
		waiting = false
		select {
		case <-ctx.Done():
		case end.hostile = <-hostileCh:
		case err := <-exited:
			end.why = fmt.Errorf("server exited or disconnected: %v", orEOF(err))
		case end.why = <-unresponsive:
			a.m.log.Warn("server stopped answering; restarting it", "server", a.cfg.Name, "error", end.why)
		case end.cmd = <-a.cmds:
		case <-a.inputs:
			if h := app.HoldOf(a.m.core.Snapshot(), a.cfg.Name); h != nil {
				a.m.log.Info("a folder of its configuration is no longer allowed; stopping the server", "server", a.cfg.Name, "hold", h.Text(""))
				end.cmd = cmdHold
			} else {
				waiting = true
			}
		}
	}
	stopPing()
	if end.hostile == nil && proc != nil {
		select {
		case end.hostile = <-proc.hostile: // it ended the session
		default:
		}
	}
	return end
}

// endRun forgets the run's session and shuts the server down: at once,
// without grace, when it was hostile or may still reach a folder it lost.
func (a *adapter) endRun(cs *sdk.ClientSession, proc *process, end runEnd) {
	a.mu.Lock()
	a.sess, a.proc, a.version = nil, nil, ""
	a.mu.Unlock()
	if end.hostile != nil {
		// It asks and does not read: nothing it has to say can be
		// read any more, and it gets no grace.
		a.m.log.Warn("server stopped as hostile", "server", a.cfg.Name, "error", end.hostile)
		proc.group().Kill()
	}
	if (end.cmd == cmdNarrowed || end.cmd == cmdHold) && proc != nil {
		// It can reach the lost folder until it exits: no grace.
		proc.group().Kill()
	}
	a.shutdown(cs, proc)
}

// afterRun decides what follows a run that ended (began then) and waits
// for it: a hostile server stays stopped until a restart; Stop stops it; a
// restart or a change starts it again at once; a server that went away by
// itself is reported failed and started again after the backoff (counted
// afresh once it had run StableAfter). It reports false when ctx ended.
func (a *adapter) afterRun(ctx context.Context, end runEnd, began time.Time, failures *int, stopped *bool) bool {
	if end.hostile != nil {
		// Stopped, not started again with backoff: it would do the
		// same. A restart (the card's, or a new configuration) tries
		// again.
		a.setState(app.ServerStopped, end.hostile)
		if !a.waitCommand(ctx, 0) {
			return false
		}
		*failures = 0
		return true
	}
	switch end.cmd {
	case cmdStop:
		*stopped = true
		return true
	case cmdRestart, cmdEmptied, cmdNarrowed, cmdHold:
		*failures = 0
		return true
	}
	// The server went away by itself: back off before starting it again.
	if time.Since(began) >= a.m.opts.StableAfter {
		*failures = 0
	} else {
		a.noteRunEnd()
	}
	why := end.why
	if tail := lastLine(a.stderr.String()); tail != "" {
		why = fmt.Errorf("%w; stderr: %s", why, tail)
	}
	a.m.log.Warn("server went away", "server", a.cfg.Name, "error", why)
	return a.backOff(ctx, why, failures, stopped)
}

// waitToStart waits until the server may start: while a slot of its
// configuration is not allowed it is held (its status says why), never
// started without the folder; and it waits, up to Options.SettleTimeout,
// for its roots' access checks (a few milliseconds at launch), so that
// what it is first told is what it may see: a server that holds its roots
// from its start is started once rather than at once and again a moment
// later, and one that asks roots/list is not answered an empty list and
// told list_changed a moment later. It reports false when ctx ended.
func (a *adapter) waitToStart(ctx context.Context) bool {
	// Set before the first snapshot is read: a change published after
	// it wakes this loop (inputsChanged).
	a.starting.Store(true)
	defer a.starting.Store(false)
	settle := time.NewTimer(a.m.opts.SettleTimeout)
	defer settle.Stop()
	settled := false
	told := false
	for {
		snap := a.m.core.Snapshot()
		h := app.HoldOf(snap, a.cfg.Name)
		if h == nil && (settled || app.RootsChecked(snap, a.cfg.Name)) {
			return true
		}
		if h == nil && !told {
			// Said once: why a server that may start has not (and the
			// moment its tests know it decided to wait).
			a.m.log.Debug("server waits for its folders' access checks before it starts", "server", a.cfg.Name)
			told = true
		}
		if h != nil {
			text := h.Text("")
			if cur := a.currentStatus(); cur.State != app.ServerHeld || cur.Error != text {
				a.m.log.Info("server held: a folder of its configuration is not allowed", "server", a.cfg.Name, "hold", text)
				a.setState(app.ServerHeld, errors.New(text))
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-a.inputs:
		case <-settle.C:
			settled = true
		case c := <-a.cmds:
			if c == cmdStop {
				a.setState(app.ServerStopped, nil)
				if !a.waitCommand(ctx, 0) {
					return false
				}
			}
		}
	}
}

// backOff reports the server failed for why and waits the backoff for the
// failures so far (counting this one), or until a command comes: Stop sets
// stopped, any other command starts again at once with a clean slate. It
// reports false when ctx ended.
func (a *adapter) backOff(ctx context.Context, why error, failures *int, stopped *bool) bool {
	a.setState(app.ServerFailed, why)
	delay := supervise.Backoff(a.m.opts.BackoffMin, a.m.opts.BackoffMax, *failures)
	*failures++
	c, ok := a.waitOrCommand(ctx, delay)
	if !ok {
		return false
	}
	if c == cmdStop {
		*stopped = true
	} else if c != 0 {
		*failures = 0
	}
	return true
}

// waitOrCommand waits for d, a command, or the end of ctx (ok false).
func (a *adapter) waitOrCommand(ctx context.Context, d time.Duration) (adapterCmd, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return 0, false
	case c := <-a.cmds:
		return c, true
	case <-t.C:
		return 0, true
	}
}

// waitCommand waits, while stopped, for a restart.
func (a *adapter) waitCommand(ctx context.Context, _ time.Duration) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case c := <-a.cmds:
			if c == cmdRestart {
				return true
			}
		}
	}
}
