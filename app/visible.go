package app

import (
	"fmt"
	"slices"
	"strings"

	"rootkeeper/app/words"
)

// Visible is the one rule: the roots server may learn in snap, sorted by path.
//
//	visible(S) = { r in roots : r.enabled and r.health == ok
//	               and decision(S, r) == allow and not paused
//	               and S.rootsMode != off }
//
// A server that is not configured sees nothing. Anything undecided is not
// visible, and a deny (or a decision not understood) wins over an allow for
// the same root. Every roots/list answer, list_changed notification, tray
// check mark and status line is derived from this function, which reads the
// snapshot's index (index.go): the rule is worked out once per snapshot.
func Visible(snap *Snapshot, server string) []Root {
	if snap == nil || snap.State.Paused {
		return nil
	}
	return slices.Clone(snap.visibility().visible[server])
}

// VisibleView is Visible without the copy: the list snap's index holds,
// which the caller must not change. The manager answers every roots/list
// and follows every change from it (a grant to fifty servers copied a
// hundred lists).
func VisibleView(snap *Snapshot, server string) []Root {
	if snap == nil || snap.State.Paused {
		return nil
	}
	return snap.visibility().visible[server]
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
	bx, ax := shownBy(before), shownBy(after)
	for name := range names {
		// Compared in the indexes, without copies: a grant to fifty
		// servers copied a hundred lists here.
		if !slices.EqualFunc(bx[name], ax[name], func(x, y Root) bool { return x.Path == y.Path }) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// shownBy is each server's visible roots in snap (Visible's, not copied;
// nothing while paused).
func shownBy(snap *Snapshot) map[string][]Root {
	if snap == nil || snap.State.Paused {
		return nil
	}
	return snap.visibility().visible
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
	out := slices.Clone(snap.visibility().seenBy[rootPath])
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
	if snap == nil {
		return nil
	}
	x := snap.visibility()
	var out []string
	for _, srv := range snap.State.Servers {
		if x.allows(srv.Name, rootPath) {
			out = append(out, srv.Name)
		}
	}
	slices.Sort(out)
	return out
}

// ConflictingDecisions describes, one line each, the decisions that cannot
// mean what they say: an allow and a deny for the same pair (the deny wins),
// or a verdict or scope this program does not know (it counts as a deny).
// Only a hand-edited state file holds them; the person is told.
func ConflictingDecisions(st *State) []string {
	var out []string
	seen := map[[2]string]Verdict{}
	for _, d := range st.Decisions {
		key := [2]string{d.Server, d.Root}
		switch {
		case d.Verdict != Allow && d.Verdict != Deny:
			out = append(out, fmt.Sprintf("decision %s/%s has unknown verdict %q: treated as deny", d.Server, d.Root, d.Verdict))
		case d.Scope != Always && d.Scope != UntilQuit:
			out = append(out, fmt.Sprintf("decision %s/%s has unknown scope %q: treated as deny", d.Server, d.Root, d.Scope))
		}
		if prev, ok := seen[key]; ok && prev != d.Verdict {
			out = append(out, fmt.Sprintf("%s has both allow and deny for %s: deny wins", d.Server, d.Root))
		}
		seen[key] = d.Verdict
	}
	for i := range out {
		out[i] = words.SafeText(out[i])
	}
	return out
}

// CoveredBy lists the roots server sees now that contain the folder at path
// (an allowed ~ contains ~/secret). A deny on path cannot hide it from
// server while one of them stays visible: roots cannot exclude a subfolder.
func CoveredBy(snap *Snapshot, server, path string) []Root {
	var out []Root
	for _, r := range Visible(snap, server) {
		if r.Path != path && IsWithin(path, r.Path) {
			out = append(out, r)
		}
	}
	return out
}

// IsWithin reports whether path is dir or inside it (both clean and
// absolute).
func IsWithin(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	// Without building dir+"/": a confined server's observer asks this of
	// every path the server opens, against each folder of its ruleset.
	return strings.HasPrefix(path, dir) && (len(path) == len(dir) || path[len(dir)] == '/')
}

// NotSeen says why a server does not see a root: the one order in which
// the window explains it, first what holds for everyone.
type NotSeen string

// The reasons, in the order they are told.
const (
	// Seen: the server sees the root.
	Seen NotSeen = ""
	// NotSeenOff: the root is turned off for everyone.
	NotSeenOff NotSeen = "turned-off"
	// NotSeenPaused: sharing is paused.
	NotSeenPaused NotSeen = "paused"
	// NotSeenHealth: the root has not passed its access check.
	NotSeenHealth NotSeen = "health"
	// NotSeenRootsOff: the server takes no roots (roots mode off).
	NotSeenRootsOff NotSeen = "roots-off"
	// NotSeenNotAllowed: the server is not allowed it (undecided or
	// denied).
	NotSeenNotAllowed NotSeen = "not-allowed"
)

// WhyNotSeen says why server does not see root r of snap, or Seen. With
// server "", it says why nobody sees it for a reason that holds for every
// server (turned off, paused, access check), or Seen. It takes the root
// itself, not its path, so that a view going through every root does not
// look each one up again.
func WhyNotSeen(snap *Snapshot, server string, r Root) NotSeen {
	switch {
	case !r.Enabled:
		return NotSeenOff
	case snap.State.Paused:
		return NotSeenPaused
	case !snap.Health[r.Path].OK():
		return NotSeenHealth
	case server == "":
		return Seen
	}
	if srv, ok := snap.State.Server(server); !ok || srv.Mode() == RootsOff {
		return NotSeenRootsOff
	}
	if !snap.visibility().allows(server, r.Path) {
		return NotSeenNotAllowed
	}
	return Seen
}
