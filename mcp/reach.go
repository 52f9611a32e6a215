package mcp

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/mcp/confine"
)

// ObserveCommand is ConfineCommand, and observes the server's reach
// (confine.WrapObserved): once the command has started, start the
// observer with a ReachWatch's Reach, and close it when the server ends.
func ObserveCommand(cmd *exec.Cmd, srv app.Server, paths []string, stateDir string) (int, *confine.Observer, error) {
	if _, err := confine.ABI(); err != nil {
		return 0, nil, err
	}
	p, err := confinePolicy(cmd, srv, paths, stateDir)
	if err != nil {
		return 0, nil, err
	}
	return confine.WrapObserved(cmd, p)
}

// A ReachWatch turns the attempts of one confined server past its ruleset
// into requests ("fs tried to read ~/Documents/taxes/2025.pdf — allow
// ~/Documents/taxes?") and waits, up to the observer's bound, for the
// person's answer: allow once (app.State.GrantOnce, from the dialog or
// `grant --once`), allow the folder (the attempt gets the file now, the
// server restarts under its new ruleset), or deny (remembered: never asked
// again). Every attempt is audited with what became of it. The managed
// clients and the bridge use it alike; the state is the only channel, so
// an answer typed in a terminal reaches a bridge as well as the app.
type ReachWatch struct {
	Server string
	Core   *app.Core
	Audit  *audit.Log // nil: none
	Log    *slog.Logger
	// Limiter bounds the requests raised (shared by the servers of one
	// process); nil: a limiter of this watch's own.
	Limiter *app.ReachLimiter
	// Skip are folders never asked about (the state folder, the server's
	// temp folder).
	Skip []string
	// Allowed are the folders the server may reach under snap, which an
	// attempt in them is handed as allowed (the ruleset is older than the
	// decision: the server is about to restart); nil means
	// app.VisiblePaths. A bridge in host-roots mode follow gives its
	// narrowed set.
	Allowed func(snap *app.Snapshot) []string

	once    sync.Once
	home    string
	mu      sync.Mutex
	folders map[string]string // a tried path's folder, by the folder it is in; bounded
}

// NewReachWatch is the watch of server, whose state folder is stateDir.
func NewReachWatch(core *app.Core, al *audit.Log, log *slog.Logger, server, stateDir string) *ReachWatch {
	w := &ReachWatch{Server: server, Core: core, Audit: al, Log: log}
	if stateDir != "" {
		w.Skip = append(w.Skip, stateDir, resolvedPath(stateDir))
		if t, err := app.ServerTemp(stateDir, server); err == nil {
			w.Skip = append(w.Skip, t, resolvedPath(t))
		}
	}
	return w
}

func resolvedPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// maxFolderCache bounds the folder cache of a watch.
const maxFolderCache = 4096

func (w *ReachWatch) init() {
	w.once.Do(func() {
		w.home, _ = os.UserHomeDir()
		w.folders = map[string]string{}
		if w.Limiter == nil {
			w.Limiter = app.NewReachLimiter()
		}
		if w.Log == nil {
			w.Log = slog.New(slog.DiscardHandler)
		}
	})
}

// folder is app.ReachFolder for a, cached by the folder the path is in.
func (w *ReachWatch) folder(snap *app.Snapshot, a confine.Attempt) (string, bool) {
	key := a.Op + "\x00" + filepath.Dir(a.Path)
	if a.Op == "list" {
		key = a.Op + "\x00" + a.Path
	}
	w.mu.Lock()
	f, hit := w.folders[key]
	w.mu.Unlock()
	if hit {
		return f, f != ""
	}
	roots := make([]string, 0, len(snap.State.Roots))
	for _, r := range snap.State.Roots {
		roots = append(roots, r.Path)
	}
	f, ok := app.ReachFolder(a.Path, a.Op, app.ReachContext{Home: w.home, Skip: w.Skip, Roots: roots, IsProject: app.LooksLikeProject})
	if !ok {
		f = ""
	}
	w.mu.Lock()
	if len(w.folders) >= maxFolderCache {
		clear(w.folders)
	}
	w.folders[key] = f
	w.mu.Unlock()
	return f, ok
}

// Reach is the confine.Reach of the server.
func (w *ReachWatch) Reach(ctx context.Context, a confine.Attempt) string {
	w.init()
	since := time.Now().UTC()
	e := audit.Entry{Time: since, Server: w.Server, Via: audit.ViaReach, Roots: []string{}, Tried: a.Path, Op: a.Op}
	defer func() {
		if w.Audit != nil {
			if err := w.Audit.Append(e); err != nil {
				w.Log.Error("cannot write the audit log", "error", err)
			}
		}
	}()
	e.Decided = audit.ReachIgnored
	if a.Op != "create" && a.Op != "write" {
		// What does not exist is not worth a question: runtimes probe for
		// files, and the call fails as it would anyway.
		if _, err := os.Lstat(a.Path); err != nil {
			return ""
		}
	}
	snap := w.Core.Snapshot()
	folder, ok := w.folder(snap, a)
	if !ok {
		return ""
	}
	e.Roots = []string{app.URIFromPath(folder)}
	answer := func() (string, bool) {
		snap := w.Core.Snapshot()
		allowed := app.VisiblePaths(snap, w.Server)
		if w.Allowed != nil {
			allowed = w.Allowed(snap)
		}
		for _, v := range allowed {
			if a.Path == v || app.IsWithin(a.Path, v) {
				e.Decided = audit.ReachAllowed
				return v, true
			}
		}
		if d, decided := snap.State.Decision(w.Server, folder); decided && d.Verdict == app.Deny {
			e.Decided = audit.ReachRefused
			return "", true
		}
		if snap.State.OnceAfter(w.Server, folder, since) {
			e.Decided = audit.ReachOnce
			return folder, true
		}
		return "", false
	}
	if f, done := answer(); done {
		return w.handable(a, f, since)
	}
	if _, open := snap.State.Request(w.Server, folder); !open {
		if !w.Limiter.Allow(w.Server, since) {
			e.Decided = audit.ReachLimited
			return ""
		}
		if err := w.Core.Update(func(s *app.State) error {
			_, err := s.AddReachRequest(w.Server, folder, a.Path, a.Op, since)
			return err
		}); err != nil {
			w.Log.Error("cannot record the request", "server", w.Server, "folder", folder, "error", err)
		}
	}
	changes, stop := w.Core.Subscribe()
	defer stop()
	e.Decided = audit.ReachRefused
	for {
		if f, done := answer(); done {
			return w.handable(a, f, since)
		}
		select {
		case <-ctx.Done():
			return ""
		case <-changes:
		}
	}
}

// handable is folder for an attempt the observer can answer with a
// descriptor. A mkdir, rename or execute cannot be answered so; allowed
// once, the folder is allowed until quit instead (and the server
// restarts), which is said in the log.
func (w *ReachWatch) handable(a confine.Attempt, folder string, since time.Time) string {
	if folder == "" || a.CanHand {
		return folder
	}
	snap := w.Core.Snapshot()
	once, ok := snap.State.OnceSince(w.Server, folder, since)
	if !ok {
		return "" // allowed: the restart gives it
	}
	by := once.By
	if by == "" {
		by = app.ByCommandLine
	}
	w.Log.Warn("allow once cannot be given to this call (only opens can be handed a file); the folder is allowed until quit instead",
		"server", w.Server, "op", a.Op, "path", a.Path, "folder", folder)
	if err := w.Core.Update(func(s *app.State) error {
		if _, exists := s.Root(folder); !exists {
			if err := s.AddRoot(app.Root{Path: folder, Source: app.SourceRequested, Enabled: true, Added: time.Now().UTC()}); err != nil {
				return err
			}
		}
		return s.Decide(app.Decision{Server: w.Server, Root: folder, Verdict: app.Allow, Scope: app.UntilQuit, By: by})
	}); err != nil {
		w.Log.Error("cannot allow the folder", "server", w.Server, "folder", folder, "error", err)
	}
	return ""
}

// observed is a confined server's observer and the watch it reports to.
type observed struct {
	obs   *confine.Observer
	watch *ReachWatch
	// witness notes what the run refused (confinefail.go); may be nil.
	witness *RunWitness
}

// start starts observing once the server has started (a nil observed
// does nothing). The observer ends by itself when the server's processes
// are gone.
func (o *observed) start() {
	if o == nil {
		return
	}
	if err := o.obs.Start(o.witness.Wrap(o.watch, o.watch.Reach)); err != nil {
		o.watch.Log.Error("cannot observe the server's reach", "server", o.watch.Server, "error", err)
	}
}
