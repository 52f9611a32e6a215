package bridge

import (
	"os/exec"

	"rootkeeper/app"

	"rootkeeper/mcp"
	"rootkeeper/mcp/confine"
)

// confineObserved confines cmd as confine does and, unless
// Options.WithoutReach, observes the server's reach as the managed clients
// do (mcp.ReachWatch): an attempt past its folders becomes a request for
// the folder, written to the state, where the app's dialog, `status` and
// `grant --once` see it; the answer comes back through the state file. It
// returns what to call once the command has started (or failed to).
func (b *bridge) confineObserved(cmd *exec.Cmd, paths []string, wit *mcp.RunWitness) (func(), *confine.Observer, error) {
	if b.o.WithoutReach {
		return func() {}, nil, b.confine(cmd, paths)
	}
	_, obs, err := mcp.ObserveCommand(cmd, b.srv, paths, b.o.StateDir)
	if err != nil {
		return nil, nil, err
	}
	w := mcp.NewReachWatch(b.o.Core, b.o.Audit, b.log, b.srv.Name, b.o.StateDir)
	w.CanAsk = b.o.CanAsk
	w.Pending = &b.reachRecs
	// What the session was started with (narrowed to the host's folders
	// in mode follow) is what an attempt may be handed as allowed.
	w.Allowed = func(*app.Snapshot) []string { return b.startPaths(b.snapshot()) }
	nw := mcp.NewNetWatch(b.o.Core, b.o.Audit, b.log, b.srv.Name, b.o.StateDir)
	nw.CanAsk = b.o.CanAsk
	nw.Pending = &b.reachRecs
	return func() {
		nw.Observe(obs, wit)
		if err := obs.Start(wit.Wrap(w, w.Reach)); err != nil {
			b.log.Error("cannot observe the server's reach", "error", err)
		}
	}, obs, nil
}
