package app

import (
	"slices"
	"time"

	"rootkeeper/app/words"
)

// This file is the window's policy: what a click on a folder means, who
// must be asked, and how several answers are recorded at once. The GUI
// draws what these functions say and forwards what the person does; it
// decides nothing itself, so that all of it is tested here without a
// display.

// Access is one server's standing on one root, as a switch in the window
// shows it.
type Access string

// The four positions of the switch.
const (
	// AccessNotAsked: no decision; the root is not visible (deny by
	// default) and the server is asked when it connects.
	AccessNotAsked Access = "not-asked"
	// AccessAllowed: allowed until revoked.
	AccessAllowed Access = "allowed"
	// AccessUntilQuit: allowed until the app quits.
	AccessUntilQuit Access = "until-quit"
	// AccessDenied: denied, and not asked again.
	AccessDenied Access = "denied"
)

// Accesses are the switch's positions in the order they are offered.
var Accesses = []Access{AccessAllowed, AccessUntilQuit, AccessDenied, AccessNotAsked}

// AccessOf is what decision d (found says whether there is one) means for
// the switch. Anything not understood (a hand-edited verdict or scope)
// reads as denied, as Visible treats it.
func AccessOf(d Decision, found bool) Access {
	switch {
	case !found:
		return AccessNotAsked
	case d.Verdict == Allow && d.Scope == Always:
		return AccessAllowed
	case d.Verdict == Allow && d.Scope == UntilQuit:
		return AccessUntilQuit
	}
	return AccessDenied
}

// Change is one switch moved: server's access to the root at Root becomes
// Access.
type Change struct {
	Server string
	Root   string
	Access Access
}

// Apply records changes in one pass, all made by by at the same moment:
// AccessNotAsked revokes, the others decide. Nothing changes when any of
// them names an unknown server, root or access.
func (s *State) Apply(changes []Change, by Source) error {
	now := time.Now().UTC()
	var ds []Decision
	var revoke []Change
	for _, c := range changes {
		d := Decision{Server: c.Server, Root: c.Root, At: now, By: by}
		switch c.Access {
		case AccessAllowed:
			d.Verdict, d.Scope = Allow, Always
		case AccessUntilQuit:
			d.Verdict, d.Scope = Allow, UntilQuit
		case AccessDenied:
			d.Verdict, d.Scope = Deny, Always
		case AccessNotAsked:
			revoke = append(revoke, c)
			continue
		default:
			return inputErrorf("invalid access %q for %s on %s", c.Access, c.Server, c.Root)
		}
		ds = append(ds, d)
	}
	if len(revoke) > 0 {
		gone := make(map[[2]string]bool, len(revoke))
		for _, c := range revoke {
			gone[[2]string{c.Server, c.Root}] = true
		}
		// Validate the decisions before revoking anything, so that a bad
		// change leaves the state as it was.
		if err := s.checkDecisions(ds); err != nil {
			return err
		}
		s.Decisions = slices.DeleteFunc(s.Decisions, func(d Decision) bool { return gone[[2]string{d.Server, d.Root}] })
	}
	return s.DecideAll(ds)
}

// DecideAll records several decisions as Decide would one by one, in one
// pass over the decisions already recorded: answering a thousand folders
// costs one sort, not a thousand. A later decision for the same pair wins.
// Nothing changes when any of them is invalid.
func (s *State) DecideAll(ds []Decision) error {
	if len(ds) == 0 {
		return nil
	}
	if err := s.checkDecisions(ds); err != nil {
		return err
	}
	now := time.Now().UTC()
	latest := make(map[[2]string]int, len(ds))
	for i, d := range ds {
		latest[[2]string{d.Server, d.Root}] = i
	}
	s.Decisions = slices.DeleteFunc(s.Decisions, func(d Decision) bool {
		_, replaced := latest[[2]string{d.Server, d.Root}]
		return replaced
	})
	s.Requests = slices.DeleteFunc(s.Requests, func(r Request) bool {
		_, decided := latest[[2]string{r.Server, r.Path}]
		return decided
	})
	for i, d := range ds {
		if latest[[2]string{d.Server, d.Root}] != i {
			continue
		}
		if d.Scope == "" {
			d.Scope = Always
		}
		if d.At.IsZero() {
			d.At = now
		}
		s.Decisions = append(s.Decisions, d)
	}
	slices.SortFunc(s.Decisions, func(a, b Decision) int {
		if c := compareStrings(a.Server, b.Server); c != 0 {
			return c
		}
		return compareStrings(a.Root, b.Root)
	})
	return nil
}

// checkDecisions names the first decision Decide would refuse.
func (s *State) checkDecisions(ds []Decision) error {
	servers := make(map[string]bool, len(s.Servers))
	for _, srv := range s.Servers {
		servers[srv.Name] = true
	}
	roots := make(map[string]bool, len(s.Roots))
	for _, r := range s.Roots {
		roots[r.Path] = true
	}
	for _, d := range ds {
		switch {
		case !servers[d.Server]:
			return inputErrorf("no server %q", d.Server)
		case !roots[d.Root]:
			return inputErrorf("no root %q", d.Root)
		case d.Verdict != Allow && d.Verdict != Deny:
			return inputErrorf("invalid verdict %q (want allow or deny)", d.Verdict)
		case d.Scope != "" && d.Scope != Always && d.Scope != UntilQuit:
			return inputErrorf("invalid scope %q (want always or until-quit)", d.Scope)
		}
	}
	return nil
}

// Answer is the decisions of one consent answer: allow for each root in
// allowed and deny for each in denied, for server, all with scope.
func Answer(server string, allowed, denied []string, scope Scope, by Source) []Decision {
	now := time.Now().UTC()
	out := make([]Decision, 0, len(allowed)+len(denied))
	for _, p := range allowed {
		out = append(out, Decision{Server: server, Root: p, Verdict: Allow, Scope: scope, At: now, By: by})
	}
	for _, p := range denied {
		out = append(out, Decision{Server: server, Root: p, Verdict: Deny, Scope: scope, At: now, By: by})
	}
	return out
}

// Share records the answer of a share question about root: it adds root
// when isNew (and it is still not there), enables it, and allows the
// servers in allowed and denies those in denied, all with scope, in one
// state change.
func (s *State) Share(root Root, isNew bool, allowed, denied []string, scope Scope, by Source) error {
	if isNew {
		if _, exists := s.Root(root.Path); !exists {
			root.Enabled = true
			if err := s.AddRoot(root); err != nil {
				return err
			}
		}
	}
	if err := s.SetEnabled(root.Path, true); err != nil {
		return err
	}
	now := time.Now().UTC()
	ds := make([]Decision, 0, len(allowed)+len(denied))
	for _, srv := range allowed {
		ds = append(ds, Decision{Server: srv, Root: root.Path, Verdict: Allow, Scope: scope, At: now, By: by})
	}
	for _, srv := range denied {
		ds = append(ds, Decision{Server: srv, Root: root.Path, Verdict: Deny, Scope: scope, At: now, By: by})
	}
	return s.DecideAll(ds)
}

// TakingServers names, in configuration order, the servers that take roots
// at all (roots mode not off): those a share question asks about.
func TakingServers(snap *Snapshot) []string {
	var out []string
	for _, srv := range serversOf(snap) {
		if srv.Mode() != RootsOff {
			out = append(out, srv.Name)
		}
	}
	return out
}

// TurnOn is what ticking a root (in the tray or the window) means.
type TurnOn struct {
	Root Root
	// Ask names the servers the person must be asked about first; when it
	// is not empty nothing is exposed until they answer.
	Ask []string
	// Enable says the root can simply be turned on: every server taking
	// roots has decided about it, and some may see it.
	Enable bool
}

// PlanTurnOn says what ticking the root at path means: with a server that
// has no decision about it, or when no server is allowed to see it, ask
// (every taking server in the second case) instead of exposing anything;
// otherwise enable it for the servers already allowed. ok is false for an
// unknown path.
func PlanTurnOn(snap *Snapshot, path string) (plan TurnOn, ok bool) {
	root, ok := snap.State.Root(path)
	if !ok {
		return TurnOn{}, false
	}
	ask := Undecided(snap, path)
	if len(ask) == 0 && len(AllowedBy(snap, path)) == 0 {
		ask = TakingServers(snap)
	}
	if len(ask) > 0 {
		return TurnOn{Root: root, Ask: ask}, true
	}
	return TurnOn{Root: root, Enable: true}, true
}

// Grid answers, for views that ask about every (server, root) pair, from
// the snapshot's visibility index (index.go): a thousand roots times twenty
// servers answered from maps instead of a scan of every decision per
// question. It agrees with Visible, Pending and AccessOf (tests say so over
// random histories).
type Grid struct {
	snap   *Snapshot
	access map[[2]string]Access // (server, root) -> access, decided pairs only; shared, read only
	seen   map[string][]string  // root -> servers that see it, config order; shared, read only
	taking []string             // servers that take roots, config order
}

// NewGrid indexes snap.
func NewGrid(snap *Snapshot) *Grid {
	x := snap.visibility()
	return &Grid{snap: snap, access: x.access, seen: x.seenBy, taking: TakingServers(snap)}
}

// Snapshot is the snapshot the grid indexes.
func (g *Grid) Snapshot() *Snapshot { return g.snap }

// Access is server's standing on the root at path.
func (g *Grid) Access(server, path string) Access {
	if a, ok := g.access[[2]string{server, path}]; ok {
		return a
	}
	return AccessNotAsked
}

// SeenBy names, in configuration order, the servers that see the root at
// path right now (as Visible says). Callers must not modify it.
func (g *Grid) SeenBy(path string) []string { return g.seen[path] }

// Taking names the servers that take roots, in configuration order.
func (g *Grid) Taking() []string { return g.taking }

// Undecided names the taking servers with no decision about the root at
// path, in configuration order.
func (g *Grid) Undecided(path string) []string {
	var out []string
	for _, s := range g.taking {
		if _, ok := g.access[[2]string{s, path}]; !ok {
			out = append(out, s)
		}
	}
	return out
}

// Question is one pair waiting for the person: may Server see Root?
type Question struct {
	Server string
	Root   Root
}

// Questions lists what the person must answer now: for every server that
// is connected and takes roots, each enabled root it has no decision about.
// Sorted by server (configuration order), then by root path (natural
// order). A server that is not running asks nothing: it is asked when it
// connects.
func (g *Grid) Questions() []Question {
	var out []Question
	roots := slices.Clone(g.snap.State.Roots)
	slices.SortFunc(roots, func(a, b Root) int { return words.CompareNatural(a.Path, b.Path) })
	for _, s := range g.taking {
		if g.snap.Servers[s].State != ServerConnected {
			continue
		}
		for _, r := range roots {
			if !r.Enabled {
				continue
			}
			if _, ok := g.access[[2]string{s, r.Path}]; !ok {
				out = append(out, Question{Server: s, Root: r})
			}
		}
	}
	return out
}

// QuestionSettle is how long the questions of connected servers wait for
// the servers still starting: servers that start together (at launch, or
// after a change) are then asked in one review instead of a queue of
// dialogs, one per server.
const QuestionSettle = 2 * time.Second

// Settling is how long to wait, from now, before asking the Questions:
// until every server that takes roots and is still starting has connected,
// or has been starting for QuestionSettle. Zero when none is starting.
func (g *Grid) Settling(now time.Time) time.Duration {
	var wait time.Duration
	for _, s := range g.taking {
		st := g.snap.Servers[s]
		if st.State != ServerStarting || st.Since.IsZero() {
			continue
		}
		wait = max(wait, st.Since.Add(QuestionSettle).Sub(now))
	}
	return wait
}

// Answers turns the person's answer to questions into decisions: the
// questions in allowed (by index) allowed, every other one denied, all
// with scope.
func Answers(qs []Question, allowed map[int]bool, scope Scope, by Source) []Decision {
	now := time.Now().UTC()
	out := make([]Decision, len(qs))
	for i, q := range qs {
		v := Deny
		if allowed[i] {
			v = Allow
		}
		out[i] = Decision{Server: q.Server, Root: q.Root.Path, Verdict: v, Scope: scope, At: now, By: by}
	}
	return out
}

// AllowUnder is the bulk action "allow all under a folder" of the
// per-server view: server may see every root at or inside dir.
func (g *Grid) AllowUnder(server, dir string) []Change {
	var out []Change
	for _, r := range g.snap.State.Roots {
		if IsWithin(r.Path, dir) && g.Access(server, r.Path) != AccessAllowed {
			out = append(out, Change{Server: server, Root: r.Path, Access: AccessAllowed})
		}
	}
	return out
}

// DenyRest is the bulk action "deny the rest" of the per-server view:
// every root server has not been asked about is denied, so that it is not
// asked again.
func (g *Grid) DenyRest(server string) []Change {
	var out []Change
	for _, r := range g.snap.State.Roots {
		if g.Access(server, r.Path) == AccessNotAsked {
			out = append(out, Change{Server: server, Root: r.Path, Access: AccessDenied})
		}
	}
	return out
}

// RecentRoots are the n roots most recently added or decided about, the
// ones a short menu (the tray) offers, in natural order of their paths.
func RecentRoots(snap *Snapshot, n int) []Root {
	last := make(map[string]time.Time, len(snap.State.Roots))
	for _, r := range snap.State.Roots {
		last[r.Path] = r.Added
	}
	for _, d := range snap.State.Decisions {
		if t, ok := last[d.Root]; ok && d.At.After(t) {
			last[d.Root] = d.At
		}
	}
	roots := slices.Clone(snap.State.Roots)
	slices.SortStableFunc(roots, func(a, b Root) int {
		if c := last[b.Path].Compare(last[a.Path]); c != 0 {
			return c
		}
		return words.CompareNatural(a.Path, b.Path)
	})
	roots = roots[:min(n, len(roots))]
	slices.SortFunc(roots, func(a, b Root) int { return words.CompareNatural(a.Path, b.Path) })
	return roots
}
