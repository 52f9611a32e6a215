package app

import "slices"

// Visible is the one rule: the roots server may learn in snap, sorted by path.
//
//	visible(S) = { r in roots : r.enabled and r.health == ok
//	               and decision(S, r) == allow and not paused
//	               and S.rootsMode != off }
//
// A server that is not configured sees nothing. Anything undecided is not
// visible. Every roots/list answer, list_changed notification, tray check mark
// and status line is derived from this function.
func Visible(snap *Snapshot, server string) []Root {
	if snap == nil || snap.State.Paused {
		return nil
	}
	srv, ok := snap.State.Server(server)
	if !ok || srv.Mode() == RootsOff {
		return nil
	}
	// Index the decisions once: Visible runs for every server on every
	// change, and a lookup per root would make it quadratic.
	allowed := map[string]bool{}
	for _, d := range snap.State.Decisions {
		if d.Server == server && d.Verdict == Allow {
			allowed[d.Root] = true
		}
	}
	var out []Root
	for _, r := range snap.State.Roots {
		if r.Enabled && allowed[r.Path] && snap.Health[r.Path].OK() {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Root) int { return compareStrings(a.Path, b.Path) })
	return out
}

// VisiblePaths is Visible reduced to the roots' paths.
func VisiblePaths(snap *Snapshot, server string) []string {
	roots := Visible(snap, server)
	paths := make([]string, len(roots))
	for i, r := range roots {
		paths[i] = r.Path
	}
	return paths
}

// Changed names, in order, the servers whose visible set differs between
// before and after. A server present in only one of them counts as changed
// when it could see something in that one.
func Changed(before, after *Snapshot) []string {
	names := map[string]bool{}
	for _, s := range serversOf(before) {
		names[s.Name] = true
	}
	for _, s := range serversOf(after) {
		names[s.Name] = true
	}
	var out []string
	for name := range names {
		if !slices.Equal(VisiblePaths(before, name), VisiblePaths(after, name)) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func serversOf(snap *Snapshot) []Server {
	if snap == nil {
		return nil
	}
	return snap.State.Servers
}

// Pending lists the enabled roots that server has no decision for, sorted by
// path: what a consent dialog for that server must ask about.
func Pending(snap *Snapshot, server string) []Root {
	if snap == nil {
		return nil
	}
	if srv, ok := snap.State.Server(server); !ok || srv.Mode() == RootsOff {
		return nil
	}
	decided := map[string]bool{}
	for _, d := range snap.State.Decisions {
		if d.Server == server {
			decided[d.Root] = true
		}
	}
	var out []Root
	for _, r := range snap.State.Roots {
		if r.Enabled && !decided[r.Path] {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Root) int { return compareStrings(a.Path, b.Path) })
	return out
}

// SharedWith names the servers that can see root in snap, sorted.
func SharedWith(snap *Snapshot, rootPath string) []string {
	var out []string
	for _, s := range serversOf(snap) {
		if slices.Contains(VisiblePaths(snap, s.Name), rootPath) {
			out = append(out, s.Name)
		}
	}
	slices.Sort(out)
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Undecided names, in order, the servers that take roots (mode not off) and
// have no decision about the root at rootPath: whom a share dialog must ask
// before the root is turned on.
func Undecided(snap *Snapshot, rootPath string) []string {
	var out []string
	for _, srv := range serversOf(snap) {
		if srv.Mode() == RootsOff {
			continue
		}
		if _, ok := snap.State.Decision(srv.Name, rootPath); !ok {
			out = append(out, srv.Name)
		}
	}
	slices.Sort(out)
	return out
}

// AllowedBy names, in order, the servers with an allow decision about the
// root at rootPath, whether or not they can see it right now.
func AllowedBy(snap *Snapshot, rootPath string) []string {
	var out []string
	if snap == nil {
		return nil
	}
	for _, d := range snap.State.Decisions {
		if d.Root == rootPath && d.Verdict == Allow {
			out = append(out, d.Server)
		}
	}
	slices.Sort(out)
	return out
}
