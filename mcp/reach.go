package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
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
// ~/Documents/taxes?"). When a person can be asked (CanAsk), the call
// waits for the answer, up to the wait the person set (app.State.ReachWait,
// 10 s by default), with the other calls on that folder that come while it
// is asked; the answer is allow once (app.State.GrantOnce: exactly the calls
// shown, each with its own access), allow the folder (the calls get their
// files now, the server restarts under its new ruleset) or deny
// (remembered: never asked again). When nobody can be asked, or the folder
// was asked about before and not answered, the call is refused at once and
// the request waits in the state for the person. Every attempt is given
// to the audit log with what became of it; the log keeps requests and
// decisions and budgets the rest (package audit). The managed clients and the bridge use it alike;
// the state is the only channel, so an answer typed in a terminal reaches a
// bridge as well as the app.
type ReachWatch struct {
	Server string
	Core   *app.Core
	Audit  *audit.Log // nil: none
	Log    *slog.Logger
	// CanAsk reports whether a person can be asked now: the app runs with
	// its window up or able to come up. nil: nobody can (headless, a
	// bridge with no app).
	CanAsk func() bool
	// Limiter bounds the requests raised (shared by the servers of one
	// process); nil: a limiter of this watch's own.
	Limiter *app.ReachLimiter
	// Skip are folders never asked about (the state folder, the server's
	// temp folder).
	Skip []string
	// Pending counts the requests written in the background for a person
	// who is not there, so that the owner can wait for them before it
	// ends (Manager.Run, the bridge); nil: a group of this watch's own.
	Pending *Background
	// Allowed are the folders the server may reach under snap, which an
	// attempt in them is handed as allowed (the ruleset is older than the
	// decision: the server is about to restart); nil means app.ReachPaths
	// of app.VisiblePaths (its roots, allowed slots and the folders it
	// needs to run). A bridge in host-roots mode follow gives its
	// narrowed set.
	Allowed func(snap *app.Snapshot) []string

	once    sync.Once
	home    string
	mu      sync.Mutex
	folders map[string]string // a tried path's folder, by the folder it is in; bounded
	// unasked writes the requests raised for nobody.
	unasked unaskedRequests
}

// NewReachWatch is the watch of server, whose state folder is stateDir.
func NewReachWatch(core *app.Core, al *audit.Log, log *slog.Logger, server, stateDir string) *ReachWatch {
	w := &ReachWatch{Server: server, Core: core, Audit: al, Log: log}
	if stateDir != "" {
		w.Skip = append(w.Skip, stateDir, app.Resolved(stateDir))
		if t, err := app.ServerTemp(stateDir, server); err == nil {
			w.Skip = append(w.Skip, t, app.Resolved(t))
		}
	}
	return w
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
		if w.Pending == nil {
			w.Pending = new(Background)
		}
	})
}

// folder is app.ReachFolder for a, cached by the folder the path is in.
func (w *ReachWatch) folder(snap *app.Snapshot, a confine.Attempt) (string, bool) {
	key := a.Op + "\x00" + filepath.Dir(a.Path)
	if a.Op == app.OpList || a.Op == app.OpWatch {
		// Asked about as the folder itself (app.ReachFolder).
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

// Reach is the confine.Reach of the server: the folder to hand the
// attempt's file beneath, or "" to refuse it. Every attempt is audited,
// with what became of it.
func (w *ReachWatch) Reach(ctx context.Context, a confine.Attempt) string {
	w.init()
	now := time.Now().UTC()
	e := audit.Entry{Time: now, Server: w.Server, Via: audit.ViaReach, Roots: []string{}, Tried: a.Path, Op: a.Op}
	defer func() {
		if w.Audit != nil {
			if err := w.Audit.Append(e); err != nil {
				w.Log.Error("cannot write the audit log", "error", err)
			}
		}
	}()
	e.Decided = audit.ReachIgnored
	if !worthAsking(a, &e) {
		return ""
	}
	snap := w.Core.Snapshot()
	folder, ok := w.folder(snap, a)
	if !ok {
		return ""
	}
	e.Roots = []string{app.URIFromPath(folder)}
	call := app.ReachCall{ID: newCallID(), Op: a.Op, Path: a.Path, NotOnce: a.Why}
	if f, done := w.answer(snap, a, folder, call, &e); done {
		return f
	}
	e.Decided = audit.ReachRefused
	until, ok := w.ask(snap, folder, call, now, &e)
	if !ok {
		return ""
	}
	if until.IsZero() {
		// Asked before and not answered, or more calls than a request
		// lists: not held again. (An answer given meanwhile still counts.)
		f, _ := w.answer(w.Core.Snapshot(), a, folder, call, &e)
		return f
	}
	return w.waitForAnswer(ctx, a, folder, call, until, &e)
}

// worthAsking reports whether attempt a may become a question. A path the
// organisation never grants is refused at once, never asked (e says so);
// one that does not exist is not worth a question, unless the call makes
// it: runtimes probe for files, and the call fails as it would anyway (e
// marks it absent).
func worthAsking(a confine.Attempt, e *audit.Entry) bool {
	if rule := app.NeverGranted(a.Path); rule != "" {
		e.Decided = audit.ReachPolicy
		return false
	}
	if a.Op != app.OpCreate && a.Op != app.OpMkdir && a.Op != app.OpRename {
		if _, err := os.Lstat(a.Path); err != nil {
			e.Absent = errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
			return false
		}
	}
	return true
}

// ask puts call in the request for folder, raising it if none is open,
// and returns until when the call waits for the person's answer (zero:
// not held). ok is false when the call is refused now: the request was
// asked before and not answered, the limiter holds a new one back, nobody
// can be asked (the request is written for the person, in the background,
// so that the call is not held by the state file's write either), or the
// state cannot be written.
func (w *ReachWatch) ask(snap *app.Snapshot, folder string, call app.ReachCall, now time.Time, e *audit.Entry) (until time.Time, ok bool) {
	req, open := snap.State.Request(w.Server, folder)
	if open && len(req.Waiting(now)) == 0 {
		// Asked before and not answered (or asked of nobody): not held
		// again, and nothing to write.
		return time.Time{}, false
	}
	asking := w.CanAsk != nil && w.CanAsk()
	if !open && !asking {
		w.raiseUnasked(folder, call, now, e)
		return time.Time{}, false
	}
	if !open && !w.Limiter.Allow(w.Server, now) {
		e.Decided = audit.ReachLimited
		return time.Time{}, false
	}
	if err := w.Core.Update(func(s *app.State) error {
		var err error
		until, err = s.AskReach(w.Server, folder, call, now, asking)
		return err
	}); err != nil {
		w.Log.Error("cannot record the request", "server", w.Server, "folder", folder, "error", err)
		return time.Time{}, false
	}
	if !until.IsZero() {
		// The audit keeps the line of the call that raised a request
		// whatever becomes of it; calls that joined it are noise once
		// refused.
		e.Request = !open
	}
	return until, true
}

// waitForAnswer holds call until the person answers the request for
// folder, the request goes without it (allowed once for other calls),
// until passes, or ctx ends; it returns what the answer says of the call
// ("" for anything but an allow).
func (w *ReachWatch) waitForAnswer(ctx context.Context, a confine.Attempt, folder string, call app.ReachCall, until time.Time, e *audit.Entry) string {
	changes, stop := w.Core.Subscribe()
	defer stop()
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	for {
		snap := w.Core.Snapshot()
		if f, done := w.answer(snap, a, folder, call, e); done {
			return f
		}
		if r, open := snap.State.Request(w.Server, folder); !open || !slices.ContainsFunc(r.Calls, func(c app.ReachCall) bool { return c.ID == call.ID }) {
			return "" // answered without this call (allow once for others)
		}
		select {
		case <-ctx.Done():
			return ""
		case <-timer.C:
			e.Decided = audit.ReachTimedOut
			return ""
		case <-changes:
		}
	}
}

// answer is what snap says of call: the folder to hand the call's file
// beneath (allowed, or allowed once for this very call), or "" to refuse
// it; done is false while the person has not answered.
func (w *ReachWatch) answer(snap *app.Snapshot, a confine.Attempt, folder string, call app.ReachCall, e *audit.Entry) (string, bool) {
	allowed := app.ReachPaths(snap, w.Server, app.VisiblePaths(snap, w.Server))
	if w.Allowed != nil {
		allowed = w.Allowed(snap)
	}
	for _, v := range allowed {
		if a.Path == v || app.IsWithin(a.Path, v) {
			// Allowed (the server restarts under its new ruleset): an open
			// gets its file now; anything else fails, and works after.
			e.Decided = audit.ReachAllowed
			if !a.CanHand {
				return "", true
			}
			return v, true
		}
	}
	if d, decided := snap.State.Decision(w.Server, folder); (decided && d.Verdict == app.Deny) || snap.State.Refused(w.Server, folder) {
		e.Decided = audit.ReachRefused
		return "", true
	}
	if _, ok := snap.State.OnceFor(w.Server, call.ID); ok && a.CanHand {
		e.Decided = audit.ReachOnce
		return folder, true
	}
	return "", false
}

// raiseUnasked raises the request for folder, on which no request is open,
// for a person who is not there (unaskedRequests): call is refused now,
// and the request is written in the background for them to find; e says
// what became of it.
func (w *ReachWatch) raiseUnasked(folder string, call app.ReachCall, now time.Time, e *audit.Entry) {
	e.Decided, e.Request = w.unasked.raise(folder, func() bool { return w.Limiter.Allow(w.Server, now) }, w.Pending, func() {
		if err := w.Core.Update(func(s *app.State) error {
			_, err := s.AskReach(w.Server, folder, call, now, false)
			return err
		}); err != nil {
			w.Log.Error("cannot record the request", "server", w.Server, "folder", folder, "error", err)
		}
	})
}

// newCallID is a name for a call that no other process picks.
func newCallID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// observed is a confined server's observer and the watch it reports to.
type observed struct {
	obs   *confine.Observer
	watch *ReachWatch
	// witness notes what the run refused (confinefail.go); may be nil.
	witness *RunWitness
	// net decides and records its network (netwatch.go).
	net *NetWatch
}

// start starts observing once the server has started (a nil observed
// does nothing). The observer ends by itself when the server's processes
// are gone.
func (o *observed) start() {
	if o == nil {
		return
	}
	o.net.observe(o.obs, o.witness)
	if err := o.obs.Start(o.witness.Wrap(o.watch, o.watch.Reach)); err != nil {
		o.watch.Log.Error("cannot observe the server's reach", "server", o.watch.Server, "error", err)
	}
}
