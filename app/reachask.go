package app

import (
	"fmt"
	"slices"
	"time"

	"rootkeeper/app/words"
)

// A ReachQuestion is a reach request as a person is asked it at one
// moment (ReachQuestionOf): the calls to show, whether they still wait,
// what allow once can do for them and which answer is the safe default.
// The window draws it; it decides none of it.
type ReachQuestion struct {
	Request Request
	// Calls are the calls shown: those waiting now (allow once answers
	// exactly these, OnceIDs), or, once none waits any more, what was
	// tried and refused.
	Calls []ReachCall
	// Waiting says that Calls wait for the answer now, until
	// Request.Until.
	Waiting bool
	// Once says that allow once can let something through: a call waits
	// that it can answer (NotOnce empty).
	Once bool
	// Default is the answer Enter gives: ReachOnce when every waiting call
	// only reads, lists or watches (OpOnlyReads) and allow once can let
	// one through, ReachDeny
	// for anything else. Never the folder: allowing the whole folder is
	// a choice the person clicks.
	Default ReachAnswer
	// Gone says why nothing waits any more ("nosy's call gave up after
	// 10 s; it was refused", "Nobody was there to ask when nosy tried
	// this; it was refused"), "" while calls wait.
	Gone string
}

// A ReachAnswer is one of the answers to a reach request.
type ReachAnswer string

// The answers to a reach request.
const (
	// ReachOnce lets the calls shown through, each with its own access,
	// and decides nothing (State.GrantOnce).
	ReachOnce ReachAnswer = "once"
	// ReachAllowFolder allows the folder (always, or until quit): the server is
	// restarted with it in its ruleset.
	ReachAllowFolder ReachAnswer = "folder"
	// ReachDeny refuses the folder, and remembers the no.
	ReachDeny ReachAnswer = "deny"
)

// ReachQuestionOf is request r (FromReach) as the person is asked it at
// now; name writes server names as the person reads them (nil keeps
// them).
func ReachQuestionOf(r Request, now time.Time, name func(string) string) ReachQuestion {
	if name == nil {
		name = func(s string) string { return s }
	}
	q := ReachQuestion{Request: r, Default: ReachDeny}
	if waiting := r.Waiting(now); len(waiting) > 0 {
		q.Calls, q.Waiting = slices.Clone(waiting), true
		reads := true
		for _, c := range waiting {
			if c.NotOnce == "" {
				q.Once = true
			}
			if !OpOnlyReads(c.Op) {
				reads = false
			}
		}
		if !OnceAllowed() {
			q.Once = false // the organisation allows lasting decisions only
		}
		if q.Once && reads {
			q.Default = ReachOnce
		}
		return q
	}
	q.Calls = slices.Clone(r.Calls)
	if len(q.Calls) == 0 && r.Tried != "" {
		q.Calls = []ReachCall{{Op: r.Op, Path: r.Tried}}
	}
	who := name(r.Server) + "'s call"
	it := "it was"
	if len(q.Calls) > 1 {
		who = fmt.Sprintf("%s's %d calls", name(r.Server), len(q.Calls))
		it = "they were"
	}
	switch {
	case r.Unasked:
		q.Gone = "Nobody was there to ask when " + name(r.Server) + " tried this; " + it + " refused"
	case !r.Until.IsZero():
		q.Gone = who + " gave up after " + waitText(r.Until.Sub(r.First)) + "; " + it + " refused"
	default:
		q.Gone = who + " no longer waits; " + it + " refused"
	}
	q.Gone = words.SafeText(q.Gone)
	return q
}

// OnceIDs are the IDs of the calls allow once answers: the calls shown,
// while they wait; none (not nil, which State.GrantOnce reads as every
// call) when nothing waits.
func (q ReachQuestion) OnceIDs() []string {
	ids := []string{}
	if !q.Waiting {
		return ids
	}
	for _, c := range q.Calls {
		ids = append(ids, c.ID)
	}
	return ids
}

// Text is the call as a person reads it: "read ~/secret/a.txt".
func (c ReachCall) Text(home string) string {
	return words.SafeText(OpText(c.Op) + " " + words.HomeShort(c.Path, home))
}

// waitText is a wait as a person reads it: "10 s", "2 min", "1 min 30 s".
func waitText(d time.Duration) string {
	s := int(max(d, 0).Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%d s", s)
	case s%60 == 0:
		return fmt.Sprintf("%d min", s/60)
	}
	return fmt.Sprintf("%d min %d s", s/60, s%60)
}

// RequestsByUrgency are reqs in the order a person is best asked them:
// those whose calls wait now first, the one whose wait ends soonest
// first, then the others as they are.
func RequestsByUrgency(reqs []Request, now time.Time) []Request {
	out := slices.Clone(reqs)
	slices.SortStableFunc(out, func(a, b Request) int {
		wa, wb := len(a.Waiting(now)) > 0, len(b.Waiting(now)) > 0
		switch {
		case wa && wb:
			return a.Until.Compare(b.Until)
		case wa:
			return -1
		case wb:
			return 1
		}
		return 0
	})
	return out
}
