package health

// The worker pool: access checks run off the event loop, each bounded in time.

import (
	"rootkeeper/app"
)

func (l *loop) worker() {
	defer l.wg.Done()
	for j := range l.jobs {
		res := l.m.checkWithin(j)
		select {
		case l.results <- res:
		case <-l.done:
			return
		}
	}
}

// checkWithin is check bounded by CheckTimeout: a check that overruns is
// reported unreadable and left behind, and the worker moves on. Until the
// stuck check returns, that root is reported unreadable at once.
func (m *Monitor) checkWithin(j job) result {
	timeout := m.opts.CheckTimeout
	late := func() result { return result{rs: j.rs, health: app.TimedOut(j.path, timeout)} }
	m.mu.Lock()
	stuck := m.stuck[j.path]
	m.mu.Unlock()
	if stuck {
		return late()
	}
	return app.WithDeadline(timeout, func() result {
		res := m.check(j)
		m.mu.Lock()
		delete(m.stuck, j.path)
		m.mu.Unlock()
		return res
	}, func() result {
		m.mu.Lock()
		m.stuck[j.path] = true
		m.mu.Unlock()
		m.log.Warn("a folder's access check is stuck; withdrawing it", "path", j.path, "after", timeout)
		return late()
	})
}

// check runs the access check of one root, and finds its branch or, when it
// is gone, whether it was renamed to one of the candidates.
func (m *Monitor) check(j job) result {
	if m.onCheck != nil {
		m.onCheck(j.path)
	}
	res := result{rs: j.rs}
	h := app.CheckAccess(j.path, j.device)
	switch h.Status {
	case app.HealthOK:
		res.id, res.hasID = idOf(j.path)
		res.gitDir, h.Branch = gitInfo(j.path)
	case app.HealthMissing:
		if !j.hasID {
			break
		}
		for _, c := range j.candidates {
			if id, ok := idOf(c); ok && id == j.id && c != j.path {
				h.Status, h.MovedTo = app.HealthMoved, c
				break
			}
		}
	}
	res.health = h
	if m.onChecked != nil {
		m.onChecked(j.path)
	}
	return res
}
