package mcp

import (
	"context"
	"os"
	"sync"
	"time"

	"rootkeeper/app"
	"rootkeeper/mcp/confine"
)

// A confined server that stops because of its confinement is told apart
// from one that fails for a reason of its own by what it tried past its
// ruleset and by its error output (app.DiagnoseConfineFailure); the
// failure is recorded in the state, where the card and `status` show it
// with the way out: allow the folder, or run the server unconfined.

// maxRefused bounds the refused attempts a run remembers.
const maxRefused = 32

// RunWitness is what one confined run of a server leaves to diagnose its
// end: the attempts refused (most recent last) and the tail of its error
// output.
type RunWitness struct {
	// Home is the server's home folder (what it was started with), for
	// naming the place of its own it reached for.
	Home    string
	mu      sync.Mutex
	refused []app.RefusedAttempt
	tail    *ring
}

// NewRunWitness is a witness for one run.
func NewRunWitness() *RunWitness { return &RunWitness{tail: newRing(8 << 10)} }

// Wrap is reach, noting what it refuses. A read of a path that does not
// exist is no refusal (the call fails as it would unconfined).
func (r *RunWitness) Wrap(w *ReachWatch, reach confine.Reach) confine.Reach {
	return func(ctx context.Context, a confine.Attempt) string {
		got := reach(ctx, a)
		if got != "" || r == nil {
			return got
		}
		if !app.OpWrites(a.Op) {
			if _, err := os.Lstat(a.Path); err != nil {
				return got
			}
		}
		folder, _ := w.folder(w.Core.Snapshot(), a)
		r.mu.Lock()
		r.refused = append(r.refused, app.RefusedAttempt{Path: a.Path, Op: a.Op, Folder: folder})
		if len(r.refused) > maxRefused {
			r.refused = r.refused[len(r.refused)-maxRefused:]
		}
		r.mu.Unlock()
		return got
	}
}

// Write is the server's error output.
func (r *RunWitness) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tail.Write(p)
}

// Diagnose says what server's confined run reached for, if that is what
// ended it (app.DiagnoseConfineFailure); a nil witness knows nothing.
func (r *RunWitness) Diagnose(server string) (app.ConfineFailure, bool) {
	if r == nil {
		return app.ConfineFailure{}, false
	}
	r.mu.Lock()
	refused := append([]app.RefusedAttempt(nil), r.refused...)
	tail := r.tail.String()
	r.mu.Unlock()
	return app.DiagnoseConfineFailure(server, refused, tail, time.Now().UTC(), r.Home)
}

// RecordConfineFailure writes f to the state (core), unless the server is
// no longer confined.
func RecordConfineFailure(core *app.Core, f app.ConfineFailure) error {
	return core.Update(func(s *app.State) error {
		s.RecordConfineFailure(f)
		return nil
	})
}

// ClearConfineFailure forgets server's failure once it ran confined; it
// writes the state only when there was one.
func ClearConfineFailure(core *app.Core, server string) error {
	if _, ok := core.Snapshot().State.ConfineFailureOf(server); !ok {
		return nil
	}
	return core.Update(func(s *app.State) error {
		s.ClearConfineFailure(server)
		return nil
	})
}

// noteRunEnd is called when a managed server's run ends by itself, failed
// (err, during the handshake) or exited within StableAfter of its start:
// a confined run that reached past its folders is recorded as a failure.
func (a *adapter) noteRunEnd() {
	a.mu.Lock()
	wit := a.witness
	a.mu.Unlock()
	if !a.cfg.Confine {
		return
	}
	if f, ok := wit.Diagnose(a.cfg.Name); ok {
		a.m.log.Warn("a confined server stopped after reaching past its folders", "server", a.cfg.Name, "tried", f.Tried, "op", f.Op)
		if err := RecordConfineFailure(a.m.core, f); err != nil {
			a.m.log.Error("cannot record the failure", "server", a.cfg.Name, "error", err)
		}
	}
}
