package audit

import (
	"errors"
	"time"
)

// Defaults of the noise budget.
const (
	// DefaultNoiseBudget is how many lines of noise a server may have
	// written a minute: a runtime's probes at start fit, a flood does not.
	DefaultNoiseBudget = 60
	// DefaultSummaryEvery is how often what was not written is written.
	DefaultSummaryEvery = time.Minute
)

// maxFirsts bounds the attempts remembered as the first of their kind; past
// it the memory starts again (the next refusal on a folder is then written
// once more).
const maxFirsts = 4096

// serverNoise is what the log keeps of one server's lines: the last written
// and its repeats held, the budget, and the count of what was not written.
type serverNoise struct {
	name string
	// last is the server's last line written (to either file) that a
	// repeat is held against; held is the repeats since, not yet written.
	last, held       Entry
	hasLast, holding bool
	// tokens is the budget left at budgetAt (a token bucket).
	tokens   float64
	budgetAt time.Time
	started  bool
	// unwritten counts what was not written since the last summary, by
	// what became of it; total is their sum, since and until the times of
	// the first and the last, sample the first.
	unwritten    map[string]int
	total        int
	since, until time.Time
	sample       Entry
	// timer writes what is held and counted SummaryEvery after it began
	// to be, should nothing else come; gen tells a stale timer.
	timer *time.Timer
	gen   int
}

// server is the noise state of server; l.mu is held.
func (l *Log) server(name string) *serverNoise {
	s, ok := l.servers[name]
	if !ok {
		s = &serverNoise{name: name}
		l.servers[name] = s
	}
	return s
}

// isTrail reports whether e belongs to the trail (and notes it as told or
// as the first of its kind); l.mu is held.
func (l *Log) isTrail(e Entry) bool {
	switch e.Via {
	case ViaConfinement:
		return true // the person's decision, each time
	case ViaSummary:
		return false
	case ViaReach, ViaNetwork:
		// A network decision of the person's (NetworkDecision) is an
		// outcome isTrailAttempt does not know: kept.
		return l.isTrailAttempt(e)
	}
	// An answer: the first one given on this way, and every change.
	key := toldKey{e.Server, e.Via}
	if prev, ok := l.told[key]; ok && prev.same(e) {
		return false
	}
	l.told[key] = e
	return true
}

// toldKey is a server and a way it is answered (Via).
type toldKey struct{ server, via string }

// isTrailAttempt is isTrail for an attempt of a confined server: the one
// that raised a request, every call allowed once, and the first attempt of
// the server on a folder that was refused, allowed or timed out, and its
// first refused by the organisation's policy; not what was not asked or
// rate-limited. An outcome this package does not know is
// kept.
func (l *Log) isTrailAttempt(e Entry) bool {
	switch e.Decided {
	case ReachIgnored, ReachLimited:
		return e.Request
	case ReachRefused, ReachAllowed, ReachTimedOut, ReachPolicy:
		folder := e.Tried
		if len(e.Roots) > 0 {
			folder = e.Roots[0]
		}
		if e.Decided == ReachPolicy {
			folder = "" // the first refusal by the policy; the rest are noise
		}
		key := e.Server + "\x00" + folder + "\x00" + e.Decided
		first := !l.firsts[key]
		if first {
			if len(l.firsts) >= maxFirsts {
				clear(l.firsts)
			}
			l.firsts[key] = true
		}
		return first || e.Request
	}
	return true
}

// appendNoise writes e to the noise file if the server's budget allows,
// holds it if it repeats the last line, or counts it; l.mu is held.
func (l *Log) appendNoise(s *serverNoise, e Entry) error {
	var errs []error
	if s.hasLast && s.last.same(e) && e.Time.Sub(s.last.Time) < CoalesceWindow {
		n := s.held.Repeated + 1
		if !s.holding {
			n = 1
		}
		s.held, s.held.Repeated, s.holding = e, n, true
		l.arm(s)
		return errors.Join(errs...)
	}
	errs = append(errs, l.flushHeld(s))
	if !s.take(e.Time, cmpOr(l.NoiseBudget, DefaultNoiseBudget)) {
		s.count(e, 1)
		s.hasLast = false // nothing written to repeat
		l.arm(s)
		return errors.Join(errs...)
	}
	s.last, s.hasLast = e, true
	errs = append(errs, l.writeNoise(e))
	return errors.Join(errs...)
}

// flushHeld writes the repeats held for s as one line of noise, within the
// budget, or counts them; l.mu is held.
func (l *Log) flushHeld(s *serverNoise) error {
	if !s.holding {
		return nil
	}
	s.holding = false
	h := s.held
	if !s.take(h.Time, cmpOr(l.NoiseBudget, DefaultNoiseBudget)) {
		s.count(h, h.Repeated)
		l.arm(s)
		return nil
	}
	return l.writeNoise(h)
}

// flushServer writes what is held and counted for s; l.mu is held.
func (l *Log) flushServer(s *serverNoise) error {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.gen++
	err := l.flushHeld(s)
	if s.total > 0 {
		err = errors.Join(err, l.writeSummary(s))
	}
	return err
}

// writeSummary writes the count of what was not written for s, and starts
// counting again; l.mu is held.
func (l *Log) writeSummary(s *serverNoise) error {
	e := Entry{Time: s.until, Server: s.name, Roots: []string{}, Via: ViaSummary,
		Unwritten: s.unwritten, Since: s.since, Tried: s.sample.Tried, Op: s.sample.Op}
	s.unwritten, s.total = nil, 0
	return l.writeNoise(e)
}

// arm starts s's timer if none runs: what is held or counted is written
// SummaryEvery later even if the server goes quiet (a summary the timer
// cannot write is lost, as a line the log cannot write is); l.mu is held.
func (l *Log) arm(s *serverNoise) {
	if s.timer != nil {
		return
	}
	s.gen++
	gen := s.gen
	s.timer = time.AfterFunc(cmpOr(l.SummaryEvery, DefaultSummaryEvery), func() {
		l.mu.Lock()
		if s.gen == gen {
			l.flushServer(s)
		}
		write := l.startWriting()
		l.mu.Unlock()
		if write {
			l.commit()
		}
	})
}

// take takes one line from s's budget at now, refilled at budget lines a
// minute up to budget; it reports whether there was one.
func (s *serverNoise) take(now time.Time, budget int) bool {
	if !s.started {
		s.tokens, s.budgetAt, s.started = float64(budget), now, true
	}
	if dt := now.Sub(s.budgetAt); dt > 0 {
		s.tokens = min(float64(budget), s.tokens+dt.Minutes()*float64(budget))
		s.budgetAt = now
	}
	if s.tokens < 1 {
		return false
	}
	s.tokens--
	return true
}

// count counts n lines like e as not written.
func (s *serverNoise) count(e Entry, n int) {
	if s.total == 0 {
		s.unwritten, s.since, s.until, s.sample = map[string]int{}, e.Time, e.Time, e
	}
	what := e.Decided
	if what == "" {
		what = e.Via
	}
	s.unwritten[what] += n
	s.total += n
	if e.Time.Before(s.since) {
		s.since = e.Time
	}
	if e.Time.After(s.until) {
		s.until = e.Time
	}
}
