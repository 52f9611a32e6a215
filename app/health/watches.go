package health

// Which folders are watched: a watch on each root and its parent, counted,
// with polling where the watch limit is hit.

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"rootkeeper/app"
)

// sync follows the state: it starts watching and checks roots that became
// enabled, and stops watching roots that did not stay so.
func (l *loop) sync(snap *app.Snapshot) {
	if l.synced && snap.StateGen == l.stateGen {
		return // a health, notice or server change: the roots are the same
	}
	l.synced, l.stateGen = true, snap.StateGen
	roots := snap.State.Roots
	want := make(map[string]app.Root, len(roots))
	for _, r := range roots {
		if r.Enabled {
			want[r.Path] = r
		}
	}
	changed := false
	for path, rs := range l.roots {
		if _, ok := want[path]; !ok {
			l.drop(rs, snap.Health[path])
			changed = true
		}
	}
	for path, r := range want {
		rs := l.roots[path]
		if rs == nil {
			rs = &rootState{root: r, parent: filepath.Dir(path)}
			l.roots[path] = rs
			changed = true
			// Watch first, then check: a change between the two is seen.
			l.watch(rs)
			l.enqueue(rs)
			continue
		}
		device := rs.root.Device
		rs.root = r
		if r.Device != device {
			l.enqueue(rs)
		}
	}
	if changed {
		l.sorted = l.sorted[:0]
		for path := range l.roots {
			l.sorted = append(l.sorted, path)
		}
		sort.Strings(l.sorted)
	}
}

// drop stops watching a root that is no longer enabled. Its health becomes
// unknown: it is not watched any more, so the last check says nothing about
// the moment it is enabled again.
func (l *loop) drop(rs *rootState, last app.Health) {
	for _, d := range rs.dirs {
		l.unuse(rs, d)
	}
	rs.dirs = nil
	l.setPolled(rs, false, false)
	delete(l.dirty, rs)
	delete(l.roots, rs.root.Path)
	tell(rs.waiting, answer{err: fmt.Errorf("%s: %w", rs.root.Path, ErrNotEnabled)})
	rs.waiting = nil
	if last.Status != app.HealthUnknown {
		l.core.SetHealth(rs.root.Path, app.Health{Branch: last.Branch, Checked: last.Checked})
	}
}

// watch makes sure the folders rs needs are watched: its parent (which sees
// it deleted, renamed, re-created or chmodded), itself, and its git
// directory. A root whose parent cannot be watched is polled; so is one that
// hit a limit. It reports whether it began to watch a folder it did not
// watch before: what changed there between the check that found it and the
// watch was not seen.
func (l *loop) watch(rs *rootState) (added bool) {
	want := []string{rs.parent}
	if rs.root.Path != rs.parent {
		want = append(want, rs.root.Path)
	}
	if rs.gitDir != "" {
		want = append(want, rs.gitDir)
	}
	for _, d := range rs.dirs {
		if !slices.Contains(want, d) {
			l.unuse(rs, d)
		}
	}
	rs.dirs = want
	if l.w == nil {
		l.setPolled(rs, true, true)
		return false
	}
	polled, limited := false, false
	for _, d := range want {
		dw := l.dirs[d]
		if dw == nil {
			dw = &dirWatch{users: map[*rootState]bool{}}
			l.dirs[d] = dw
		}
		dw.users[rs] = true
		if dw.ok {
			continue
		}
		err := l.w.Add(d)
		switch {
		case err == nil:
			dw.ok = true
			added = true
		case isLimit(err):
			polled, limited = true, true
		case d == rs.parent:
			polled = true // nothing would see the root come back
		}
	}
	l.setPolled(rs, polled, limited)
	return added
}

func (l *loop) unuse(rs *rootState, d string) {
	dw := l.dirs[d]
	if dw == nil {
		return
	}
	delete(dw.users, rs)
	if len(dw.users) == 0 {
		if dw.ok && l.w != nil {
			l.w.Remove(d) // may already be gone with the folder
		}
		delete(l.dirs, d)
	}
}

func (l *loop) setPolled(rs *rootState, polled, limited bool) {
	if polled {
		l.polled[rs] = true
	} else {
		delete(l.polled, rs)
	}
	if limited != rs.limited {
		if limited {
			l.limitedN++
		} else {
			l.limitedN--
		}
	}
	rs.polled, rs.limited = polled, limited
}

// updateNotice says, once, that folders are polled because of a limit, and
// takes it back when they no longer are.
func (l *loop) updateNotice() {
	msg := ""
	switch {
	case l.w == nil && len(l.roots) > 0:
		msg = fmt.Sprintf("Folders cannot be watched (%v); checking them every %s instead.", l.wErr, l.m.opts.PollInterval)
	case l.limitedN > 0:
		msg = fmt.Sprintf("The system's limit on watched folders was reached (fs.inotify.max_user_watches or max_user_instances); some folders are checked every %s instead.", l.m.opts.PollInterval)
	}
	if msg == l.notice {
		return
	}
	if msg != "" {
		l.m.log.Warn(msg)
	}
	l.notice = msg
	l.core.SetNotice(NoticeTopic, msg)
}
