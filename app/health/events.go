package health

// What an event means: the roots it touches are checked again (debounced),
// and a root renamed away is paired with the folder that appeared.

import (
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"rootkeeper/app"
)

// event turns one file-system event into the roots it may concern. Events
// that cannot change a root's health (a file created inside it, say) are
// dropped here, before any check.
func (l *loop) event(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	now := time.Now()
	// A watched folder itself changed: every root that needs it is checked,
	// and if it went, so did its watch.
	if dw := l.dirs[name]; dw != nil {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			dw.ok = false
		}
		for rs := range dw.users {
			l.mark(rs)
		}
	}
	// A root, or a folder above roots, was created, removed, renamed or
	// chmodded.
	if rs := l.roots[name]; rs != nil {
		l.mark(rs)
		if ev.Has(fsnotify.Rename) {
			rs.renamedAt, l.lastRename = now, now
		}
	}
	l.markBelow(name)
	dir, base := filepath.Dir(name), filepath.Base(name)
	switch base {
	case "HEAD": // a branch switch
		if dw := l.dirs[dir]; dw != nil {
			for rs := range dw.users {
				if rs.gitDir == dir {
					l.mark(rs)
				}
			}
		}
	case ".git": // a repository appeared or went
		if rs := l.roots[dir]; rs != nil {
			l.mark(rs)
		}
	}
	// Remember what was created right after a rename: fsnotify reports a
	// rename as a Rename of the old name and a Create of the new one.
	if ev.Has(fsnotify.Create) && l.roots[name] == nil && now.Sub(l.lastRename) < l.renameWindow() {
		if len(l.creates) == maxCandidates {
			l.creates = l.creates[1:]
		}
		l.creates = append(l.creates, created{name, now})
	}
}

// renameWindow is how long after a rename a creation counts as its new name.
func (l *loop) renameWindow() time.Duration { return 10*l.m.opts.Debounce + time.Second }

// markBelow marks the roots strictly inside dir.
func (l *loop) markBelow(dir string) {
	prefix := dir
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	for i := sort.SearchStrings(l.sorted, prefix); i < len(l.sorted) && strings.HasPrefix(l.sorted[i], prefix); i++ {
		l.mark(l.roots[l.sorted[i]])
	}
}

// mark schedules a check of rs at the end of the current debounce window.
// The window starts with the first event and is not extended by later ones,
// so a steady stream of events still gives a check every Debounce.
func (l *loop) mark(rs *rootState) {
	l.dirty[rs] = true
	if l.debounceC == nil {
		l.debounce.Reset(l.m.opts.Debounce)
		l.debounceC = l.debounce.C
	}
}

func (l *loop) markAll() {
	for _, rs := range l.roots {
		l.mark(rs)
	}
}

// enqueueAll schedules a check of every root now.
func (l *loop) enqueueAll() {
	for _, rs := range l.roots {
		l.enqueue(rs)
	}
}

// enqueue schedules a check of rs now.
func (l *loop) enqueue(rs *rootState) {
	switch {
	case rs.inflight:
		rs.again = true
	case !rs.queued:
		rs.queued = true
		l.queue = append(l.queue, rs)
	}
}

// fillHead prepares the next job, if there is one.
func (l *loop) fillHead() bool {
	for l.head == nil && len(l.queue) > 0 {
		rs := l.queue[0]
		l.queue[0] = nil
		l.queue = l.queue[1:]
		rs.queued = false
		if l.roots[rs.root.Path] != rs {
			continue // dropped while it waited
		}
		rs.inflight = true
		j := job{rs: rs, path: rs.root.Path, device: rs.root.Device, id: rs.id, hasID: rs.hasID}
		if rs.movedTo != "" {
			j.candidates = append(j.candidates, rs.movedTo)
		}
		if !rs.renamedAt.IsZero() {
			for _, c := range l.creates {
				if c.at.Sub(rs.renamedAt).Abs() < l.renameWindow() {
					j.candidates = append(j.candidates, c.path)
				}
			}
		}
		l.head = &j
	}
	if len(l.queue) == 0 {
		l.queue = nil // let the backing array go
	}
	return l.head != nil
}

// finish publishes a check's result and adjusts the watches to it.
func (l *loop) finish(res result) {
	rs := res.rs
	if l.roots[rs.root.Path] != rs {
		return // dropped while it was checked
	}
	rs.inflight = false
	again := rs.again
	rs.again = false
	h := res.health
	switch h.Status {
	case app.HealthOK:
		rs.id, rs.hasID = res.id, res.hasID
		rs.gitDir = res.gitDir
		rs.movedTo, rs.renamedAt = "", time.Time{}
	default:
		rs.movedTo = h.MovedTo
	}
	// If something changed during the check, an ok may already be stale:
	// publish only bad news, and look again.
	if !again || !h.OK() {
		l.core.SetHealth(rs.root.Path, h)
	}
	if l.watch(rs) && h.OK() && !again {
		// A folder watched only now (a git directory the check just
		// found, one that came back): a change there between the check's
		// read and the watch made no event, so it is checked once more,
		// at the end of the debounce window (with any others).
		l.mark(rs)
	}
	if again {
		// Those waiting for a check asked for one begun after they asked:
		// this one may have begun before.
		l.enqueue(rs)
		return
	}
	tell(rs.waiting, answer{health: h})
	rs.waiting = nil
}
