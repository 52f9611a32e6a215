package bridge

// The server's roots: answered by the one rule, and followed as the state
// changes (list_changed, or a restart for a server that holds them from its start).

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"rootkeeper/app"
	"rootkeeper/mcp"
)

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

// sameRun reports whether now and started run the same program the same way and
// give it its roots the same way (sampling and host-roots modes are read
// live, and may differ).
func sameRun(now, started app.Server) bool {
	now.Sampling, started.Sampling = "", ""
	now.HostRoots, started.HostRoots = "", ""
	now.KeepArgs, started.KeepArgs = nil, nil
	// A network widened needs no restart: each contact is decided from
	// the state as it is made (app.NetworkNeedsRestart).
	return reflect.DeepEqual(now, started) || app.SameRunButNetwork(started, now)
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
		cur := b.cur
		started := cur.paths
		b.rmu.RUnlock()
		if want := b.startPaths(snap); !slices.Equal(want, started) && !(len(want) == 0 && len(started) == 0) {
			added, widened := mcp.Widened(started, want)
			if !widened || cur.obs == nil || b.srv.Mode() != app.RootsProtocol {
				b.restart()
				return
			}
			// A grant: the running server reaches the new folders through
			// its observer, keeps its pid and its host's session, and is
			// told below by roots/list_changed.
			cur.obs.Extend(added)
			b.rmu.Lock()
			if b.cur == cur {
				cur.paths = want
			}
			b.rmu.Unlock()
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
