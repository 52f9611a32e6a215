package app

import (
	"rootkeeper/app/policy"
	"slices"
	"sync"
)

// visIndex is the one rule worked out for every server of a snapshot at
// once: each decided pair's standing, and who sees which root now. Every
// reader of the rule (Visible, VisibleFor, the window's Grid, the slots'
// states, SharedWith, AllowedBy…) asks it, so the rule is written once,
// here, and computed once per snapshot.
type visIndex struct {
	// access is the standing of each decided (server, root) pair; a no (a
	// deny, or a decision not understood) wins over an allow for the same
	// pair, so that a state file holding both never exposes it.
	access map[[2]string]Access
	// visible is each server's visible roots, sorted by path.
	visible map[string][]Root
	// seenBy is, for each root that someone sees, the servers that see it,
	// in configuration order.
	seenBy map[string][]string
}

// visCell holds a snapshot's index, built on first use. Core.publish gives
// a snapshot a new cell whenever its state or health changes, and shares
// the cell otherwise (the index depends on nothing else).
type visCell struct {
	once sync.Once
	idx  *visIndex
}

// visibility is snap's index: cached when snap was published by a Core,
// worked out anew for a snapshot made by hand.
func (s *Snapshot) visibility() *visIndex {
	if s == nil {
		return buildIndex(nil)
	}
	c := s.vis
	if c == nil {
		return buildIndex(s)
	}
	c.once.Do(func() { c.idx = buildIndex(s) })
	return c.idx
}

func buildIndex(snap *Snapshot) *visIndex {
	x := &visIndex{visible: map[string][]Root{}, seenBy: map[string][]string{}}
	if snap == nil {
		x.access = map[[2]string]Access{}
		return x
	}
	x.access = make(map[[2]string]Access, len(snap.State.Decisions))
	for _, d := range snap.State.Decisions {
		key := [2]string{d.Server, d.Root}
		a := AccessOf(d, true)
		if old, ok := x.access[key]; ok && (old == AccessDenied || a != AccessDenied) {
			continue
		}
		x.access[key] = a
	}
	if snap.State.Paused || snap.Policy.Broken != "" {
		// Paused, or under a policy that cannot be read: nothing is
		// shared (a broken policy is not run without).
		return x
	}
	home := homeForPolicy()
	var taking []string
	for _, srv := range snap.State.Servers {
		if srv.Mode() != RootsOff && snap.Policy.Denied(policy.Server{Name: srv.Name, Command: srv.Command, Args: srv.Args, URL: srv.URL}) == "" {
			taking = append(taking, srv.Name)
		}
	}
	for _, r := range snap.State.Roots {
		if !r.Enabled || !snap.Health[r.Path].OK() || snap.Policy.NeverGranted(r.Path, home) != "" {
			continue
		}
		for _, s := range taking {
			if x.allows(s, r.Path) {
				x.visible[s] = append(x.visible[s], r)
				x.seenBy[r.Path] = append(x.seenBy[r.Path], s)
			}
		}
	}
	for _, roots := range x.visible {
		slices.SortFunc(roots, func(a, b Root) int { return compareStrings(a.Path, b.Path) })
	}
	return x
}

// allows reports whether server may see the root at path by decision (not
// yet narrowed by enabled, health or pause).
func (x *visIndex) allows(server, path string) bool {
	a := x.access[[2]string{server, path}]
	return a == AccessAllowed || a == AccessUntilQuit
}

// allowedIn are the roots server may see by decision among decisions,
// those it is refused (any other decision) apart.
func (x *visIndex) allowedIn(decisions []Decision, server string) (allowed, refused []string) {
	for _, d := range decisions {
		if d.Server != server {
			continue
		}
		if x.allows(server, d.Root) {
			allowed = append(allowed, d.Root)
		} else {
			refused = append(refused, d.Root)
		}
	}
	return allowed, refused
}
