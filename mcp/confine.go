package mcp

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
	"rootkeeper/mcp/confine"
)

// landlockMissing says whether Landlock is missing here (asked once).
var landlockMissing = sync.OnceValue(func() bool {
	_, err := confine.ABI()
	return errors.Is(err, confine.ErrUnavailable)
})

// RunsConfined reports whether stdio server srv runs under Landlock here:
// it is to be confined and Landlock is here. Where Landlock is missing
// (Windows, macOS, an old kernel) a server confined by default runs
// unconfined (app.RunsUnconfinedHere) and learns a change of its roots as
// any unconfined server does, by roots/list_changed: it is not restarted
// for one. (One whose confinement was asked for in so many words is not
// started there at all.)
func RunsConfined(srv app.Server) bool {
	return srv.Confine && !app.RunsUnconfinedHere(srv, landlockMissing())
}

// ConfineCommand rewrites cmd, a stdio server's command from StdioCommand,
// to run server srv under Landlock: read-write on paths (its visible roots,
// as app.VisiblePaths gives them, or a bridged session's narrowed set) and
// on its private temp folder (TempFolder), read-only on what it needs
// to run, nothing else. It returns the Landlock ABI used. Where Landlock is
// missing it fails with an error starting "cannot confine", and the server
// must not be started: the person asked for confinement.
//
// A ruleset cannot be widened or narrowed on a running process: when paths
// change, the server must be started again (the managed clients do so in
// syncRoots; the bridge restarts its server and replays initialize).
func ConfineCommand(cmd *exec.Cmd, srv app.Server, paths []string, stateDir string) (int, error) {
	if _, err := confine.ABI(); err != nil {
		return 0, err
	}
	p, err := confinePolicy(cmd, srv, paths, stateDir)
	if err != nil {
		return 0, err
	}
	return confine.Wrap(cmd, p)
}

// confinePolicy is what server srv, started by cmd, may reach confined:
// paths read-write (app.ReachPaths: its visible roots, allowed slots and
// the folders it needs to run, which are its alone), its private temp
// folder, its data folder and what the table of known servers says is its
// own, with Rootkeeper's state folder protected (a granted folder that
// holds it, the home folder or ~/.config say, must not let the server
// rewrite the decisions).
func confinePolicy(cmd *exec.Cmd, srv app.Server, paths []string, stateDir string) (confine.Policy, error) {
	temp, err := TempFolder(stateDir, srv.Name)
	if err != nil {
		return confine.Policy{}, err
	}
	own, err := app.ServerOwnState(srv, stateDir, EnvHome(cmd.Env))
	if err != nil {
		return confine.Policy{}, err
	}
	// Rootkeeper's state, and what the organisation's policy never grants
	// inside a folder it may reach (~/.ssh inside an allowed ~), stay out
	// of its reach.
	protect := []string{stateDir}
	for _, p := range paths {
		protect = append(protect, app.NeverGrantedBeneath(p)...)
	}
	p := confine.Policy{Roots: paths, Temp: temp, Data: own.Data, Own: own.Own, Env: own.Env, Protect: protect}
	if srv.NetworkOf().Mode == app.NetworkOff {
		p.Network = confine.NetworkOff
	}
	p.Upstream = sandboxNameservers()
	return p, nil
}

// EnvHome is HOME in env (a command's environment), or this process's
// home folder.
func EnvHome(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "HOME="); ok && v != "" {
			return v
		}
	}
	h, _ := os.UserHomeDir()
	return h
}

// TempFolder is the private temp folder of confined server name, made when
// missing: outside the state folder, so that the server's TMPDIR does not
// say where the state folder is (app.ServerTemp).
func TempFolder(stateDir, name string) (string, error) {
	return app.ServerTemp(stateDir, name)
}

// confineCommand confines a managed server's command to its visible set in
// snap, and remembers that set: syncRoots restarts the server when it
// changes.
func (a *adapter) confineCommand(cmd *exec.Cmd, snap *app.Snapshot) (*observed, error) {
	paths := app.ReachPaths(snap, a.cfg.Name, app.VisiblePaths(snap, a.cfg.Name))
	var abi int
	var err error
	var obs *observed
	if a.m.opts.WithoutReach {
		abi, err = ConfineCommand(cmd, a.cfg, paths, a.m.opts.StateDir)
	} else {
		var o *confine.Observer
		abi, o, err = ObserveCommand(cmd, a.cfg, paths, a.m.opts.StateDir)
		if err == nil {
			w := NewReachWatch(a.m.core, a.m.audit, a.m.log, a.cfg.Name, a.m.opts.StateDir)
			w.Limiter = a.m.reachLimit
			w.Pending = &a.m.reachRecs
			w.CanAsk = a.m.opts.CanAsk
			nw := NewNetWatch(a.m.core, a.m.audit, a.m.log, a.cfg.Name, a.m.opts.StateDir)
			nw.Pending = &a.m.reachRecs
			nw.Limiter = a.m.netLimit
			nw.CanAsk = a.m.opts.CanAsk
			obs = &observed{obs: o, watch: w, net: nw}
			a.mu.Lock()
			a.observer = o
			a.mu.Unlock()
		}
	}
	if err != nil {
		a.update(func(s *app.ServerStatus) { s.LandlockABI = 0 })
		return nil, err
	}
	a.mu.Lock()
	a.startedWith = paths
	a.mu.Unlock()
	a.update(func(s *app.ServerStatus) { s.LandlockABI = abi })
	return obs, nil
}

// confinedStale returns the restart command for a confined server in
// protocol mode that runs under a ruleset for other paths than the visible
// ones in snap, or 0 — also when only folders were added and its observer
// can hand them (a grant reaches it without a restart; a revoke restarts
// it, since a ruleset cannot be narrowed and what was handed stays open). It notes the restart as done so that the pokes that
// come before it takes effect do not ask again. (Args and env modes
// restart on any change already.)
func (a *adapter) confinedStale(snap *app.Snapshot) adapterCmd {
	if !RunsConfined(a.cfg) || a.mode != app.RootsProtocol {
		return 0
	}
	paths := app.ReachPaths(snap, a.cfg.Name, app.VisiblePaths(snap, a.cfg.Name))
	a.mu.Lock()
	defer a.mu.Unlock()
	if slices.Equal(paths, a.startedWith) || (len(paths) == 0 && len(a.startedWith) == 0) {
		return 0
	}
	old := a.startedWith
	if added, ok := Widened(old, paths); ok && a.observer != nil {
		// A grant: the running server reaches the new folders through its
		// observer (confine.Observer.Extend), keeps its pid and session,
		// and is told by roots/list_changed; its next start has them in
		// its ruleset. Also while it starts: a server that waits for a
		// folder before it answers initialize gets it now.
		a.startedWith = paths
		a.observer.Extend(added)
		return 0
	}
	if a.sess == nil {
		// Still starting: the poke after its handshake compares again
		// and restarts it (lost folders), within ConnectTimeout.
		return 0
	}
	a.startedWith = paths
	return a.restartCommand(old, paths)
}

// Widened reports whether now holds every path of old (only folders were
// added), and which paths it added.
func Widened(old, now []string) (added []string, ok bool) {
	for _, p := range old {
		if !slices.Contains(now, p) {
			return nil, false
		}
	}
	for _, p := range now {
		if !slices.Contains(old, p) {
			added = append(added, p)
		}
	}
	return added, true
}

// restartCommand is how to restart a server started with the paths old for
// the paths now: a confined server that lost one is killed without grace
// (cmdNarrowed), since until it exits its ruleset still lets it reach the
// folder; anything else is an ordinary restart.
func (a *adapter) restartCommand(old, now []string) adapterCmd {
	if RunsConfined(a.cfg) {
		for _, p := range old {
			if !slices.Contains(now, p) {
				return cmdNarrowed
			}
		}
	}
	return cmdRestart
}

// needsChanged tells the adapter that the folders its server needs to run
// changed: a running confined server is restarted under its new ruleset
// (syncRoots, through confinedStale: at once, without grace, when it lost
// one), and one that failed and waits to be started again is started now,
// since what it stopped for may be what it was just given.
func (a *adapter) needsChanged() {
	if a.currentSession() == nil && a.currentStatus().State == app.ServerFailed {
		a.command(cmdRestart)
		return
	}
	a.poke()
}

// setClientRootsQuietly makes the client's roots want without telling the
// connected server, which is about to be restarted and will ask anew.
func (a *adapter) setClientRootsQuietly(have, want []*sdk.Root) {
	if a.wired() {
		return // its client's roots are not kept (wired)
	}
	stale := make([]string, 0, len(have))
	for _, r := range have {
		stale = append(stale, r.URI)
	}
	a.quiet.Store(true)
	defer a.quiet.Store(false)
	a.client.RemoveRoots(stale...)
	if len(want) > 0 {
		a.client.AddRoots(want...)
	}
}
