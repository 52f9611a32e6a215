package app

import (
	"fmt"
	"os"
	"slices"
	"time"

	"rootkeeper/app/words"
)

// A Request is a folder someone asked that a server see, without deciding
// it: a host's working folder ("Claude Code in ~/src/x asks that fs see
// ~/src/x"), or a folder found on a server's command line. A request is
// never shared by itself; the person decides it like any other root
// (`grant fs ~/src/x`), which records the decision and drops the request.
type Request struct {
	// Server is the server the folder was asked for.
	Server string `json:"server"`
	// Path is the folder's canonical path.
	Path string `json:"path"`
	// From says who asked: a host ("claude-code 2.1.330") or
	// FromCommandLine.
	From string `json:"from"`
	// First and Last are when it was first and last asked.
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
	// Tried and Op are, for a request FromReach, the path the server
	// tried last and what it tried (read, list, write, create, rename,
	// execute).
	Tried string `json:"tried,omitempty"`
	Op    string `json:"op,omitempty"`
	// Calls are, for a request FromReach, the calls that wait on it while
	// the person is asked (see AskReach), until Until; after Until they
	// have been refused. Unasked says that nobody could be asked when the
	// attempt was made: it was refused at once, and the request waits for
	// the person.
	Calls   []ReachCall `json:"calls,omitempty"`
	Until   time.Time   `json:"until,omitzero"`
	Unasked bool        `json:"unasked,omitempty"`
}

// FromCommandLine is Request.From for a folder found on a server's command
// line or in its environment.
const FromCommandLine = "command-line"

// MaxRequestsPerServer bounds the open requests of one server: a host that
// answers roots/list with ten thousand folders cannot grow the state file
// without end. The oldest requests give way.
const MaxRequestsPerServer = 64

// HostRootsMode says what a bridged server makes of its host's folders.
type HostRootsMode string

// The host-roots modes.
const (
	// HostRootsRequest (the default): the server sees its allowed set; the
	// host's folders become requests.
	HostRootsRequest HostRootsMode = "request"
	// HostRootsFollow: for per-project servers, a session sees its allowed
	// set narrowed to the host's folders; host folders no allow covers
	// become requests.
	HostRootsFollow HostRootsMode = "follow"
)

// HostRootsMode returns the server's host-roots mode, request when unset.
func (s Server) HostRootsMode() HostRootsMode {
	if s.HostRoots == "" {
		return HostRootsRequest
	}
	return s.HostRoots
}

// AddRequest records that from asked that server see the folder at path
// (canonical, absolute), at time at. Nothing is recorded when the pair is
// already decided, or when path is already visible to server through a root
// it is allowed (an allowed ~/src covers a request for ~/src/x). It reports
// whether the state changed.
func (s *State) AddRequest(server, path, from string, at time.Time) (bool, error) {
	if err := ValidAbsPath(path); err != nil {
		return false, &InputError{Msg: err.Error()}
	}
	if _, ok := s.Server(server); !ok {
		return false, inputErrorf("no server %q", server)
	}
	if _, decided := s.Decision(server, path); decided {
		return false, nil
	}
	for _, d := range s.Decisions {
		if d.Server == server && d.Verdict == Allow && IsWithin(path, d.Root) {
			return false, nil
		}
	}
	if s.needed(server, path) {
		return false, nil // in a folder it needs to run: it has it
	}
	if i := slices.IndexFunc(s.Requests, func(r Request) bool { return r.Server == server && r.Path == path }); i >= 0 {
		if s.Requests[i].From == from && !at.After(s.Requests[i].Last.Add(time.Minute)) {
			return false, nil // asked again just now: not worth a write
		}
		s.Requests[i].Last, s.Requests[i].From = at, from
		return true, nil
	}
	s.Requests = append(s.Requests, Request{Server: server, Path: path, From: from, First: at, Last: at})
	s.trimRequests(server)
	slices.SortFunc(s.Requests, func(a, b Request) int {
		if c := compareStrings(a.Server, b.Server); c != 0 {
			return c
		}
		return compareStrings(a.Path, b.Path)
	})
	return true, nil
}

// trimRequests keeps the newest MaxRequestsPerServer requests of server.
func (s *State) trimRequests(server string) {
	var mine []Request
	for _, r := range s.Requests {
		if r.Server == server {
			mine = append(mine, r)
		}
	}
	if len(mine) <= MaxRequestsPerServer {
		return
	}
	slices.SortFunc(mine, func(a, b Request) int { return b.Last.Compare(a.Last) })
	keep := map[string]bool{}
	for _, r := range mine[:MaxRequestsPerServer] {
		keep[r.Path] = true
	}
	s.Requests = slices.DeleteFunc(s.Requests, func(r Request) bool { return r.Server == server && !keep[r.Path] })
}

// TouchRequest marks the open request of server for path as asked again at
// at, so that a window that put it off asks it now. It reports whether
// there was one.
func (s *State) TouchRequest(server, path string, at time.Time) bool {
	i := slices.IndexFunc(s.Requests, func(r Request) bool { return r.Server == server && r.Path == path })
	if i < 0 {
		return false
	}
	s.Requests[i].Last = at
	return true
}

// RequestsFor lists the open requests of server, by path.
func (s *State) RequestsFor(server string) []Request {
	var out []Request
	for _, r := range s.Requests {
		if r.Server == server {
			out = append(out, r)
		}
	}
	return out
}

// Request returns the open request of server for path, if any.
func (s *State) Request(server, path string) (Request, bool) {
	for _, r := range s.Requests {
		if r.Server == server && r.Path == path {
			return r, true
		}
	}
	return Request{}, false
}

// DecideRequest decides the request of d.Server for d.Root, or a slot of
// its configuration (asked about or not): a folder becomes a root (enabled,
// source SourceRequested) if it is not one yet, a file slot is decided as
// it is; the decision is recorded and the request dropped.
func (s *State) DecideRequest(d Decision) error {
	req, asked := s.Request(d.Server, d.Root)
	if asked && req.From == FromNetwork {
		return inputErrorf("%s's request for %q is a network destination: answer it with `rootkeeper servers network %s allow|deny %s`", d.Server, d.Root, words.ShellQuote(d.Server), words.ShellQuote(d.Root))
	}
	slot, file := s.SlotPath(d.Server, d.Root)
	if !asked && !slot {
		return inputErrorf("%s has no request for %q", d.Server, d.Root)
	}
	if _, exists := s.Root(d.Root); !exists && !file {
		if err := s.AddRoot(Root{Path: d.Root, Source: SourceRequested, Enabled: true, Added: time.Now().UTC()}); err != nil {
			return err
		}
	}
	if err := s.Decide(d); err != nil {
		return err
	}
	s.dropRequest(d.Server, d.Root)
	return nil
}

func (s *State) dropRequest(server, path string) {
	s.Requests = slices.DeleteFunc(s.Requests, func(r Request) bool { return r.Server == server && r.Path == path })
}

// RequestText is how a request reads to a person: "claude-code asks that
// fs see /home/me/src/x", or, for a slot of its configuration, "fs is
// configured with /home/me/Desktop", or for an attempt of a confined
// server "fs tried to read ~/Documents/taxes/2025.pdf — allow
// ~/Documents/taxes?".
func RequestText(r Request) string {
	if r.From == FromReach {
		home, _ := os.UserHomeDir()
		return reachText(r, home, func(s string) string { return s })
	}
	if r.From == FromNetwork {
		return networkText(r, func(s string) string { return s })
	}
	if r.From == FromCommandLine {
		return words.SafeText(fmt.Sprintf("%s is configured with %s", r.Server, r.Path))
	}
	return words.SafeText(fmt.Sprintf("%s asks that %s see %s", r.From, r.Server, r.Path))
}

// VisibleFor is the one rule for a bridged session whose host works in
// hostRoots (canonical paths): in host-roots mode follow, Visible narrowed
// to the host's folders — an allowed ~/src and a host folder ~/src/x give
// ~/src/x, a host folder that is itself allowed stays as it is, and host
// folders no visible root covers, or that are refused to the server (or
// inside a refused folder within the root), give nothing; in mode request (and for any
// other server), Visible unchanged. Each narrowed root keeps the name of
// the folder and the health of the root that covers it.
func VisibleFor(snap *Snapshot, server string, hostRoots []string) []Root {
	vis := Visible(snap, server)
	srv, ok := snap.State.Server(server)
	if !ok || srv.HostRootsMode() != HostRootsFollow {
		return vis
	}
	// A folder refused to this server stays refused when the host works in
	// it or below it: narrowing is the one place where a no on a subfolder
	// of an allowed root can be honoured.
	_, refused := snap.visibility().allowedIn(snap.State.Decisions, server)
	seen := map[string]bool{}
	var out []Root
	for _, h := range hostRoots {
		for _, r := range vis {
			var got Root
			switch {
			case h == r.Path || IsWithin(r.Path, h):
				// The host works in this root or above it: the root, as
				// allowed (never more than allowed).
				got = r
			case IsWithin(h, r.Path):
				if slices.ContainsFunc(refused, func(d string) bool { return IsWithin(h, d) && IsWithin(d, r.Path) }) {
					continue
				}
				got = Root{Path: h, Name: baseName(h), Source: r.Source, Enabled: true, Device: r.Device}
			default:
				continue
			}
			if !seen[got.Path] {
				seen[got.Path] = true
				out = append(out, got)
			}
		}
	}
	slices.SortFunc(out, func(a, b Root) int { return compareStrings(a.Path, b.Path) })
	return out
}

// WithoutUntilQuit is snap with the decisions (and the folders servers
// need to run) scoped until quit taken out:
// what holds when no app is running (such decisions end when the app that
// they were made in quits).
func WithoutUntilQuit(snap *Snapshot) *Snapshot {
	if !slices.ContainsFunc(snap.State.Decisions, func(d Decision) bool { return d.Scope == UntilQuit }) &&
		!slices.ContainsFunc(snap.State.Needs, func(n Need) bool { return n.Scope == UntilQuit }) {
		return snap
	}
	c := *snap
	c.State.Decisions = slices.DeleteFunc(slices.Clone(snap.State.Decisions), func(d Decision) bool { return d.Scope == UntilQuit })
	c.State.Needs = slices.DeleteFunc(slices.Clone(snap.State.Needs), func(n Need) bool { return n.Scope == UntilQuit })
	c.vis = new(visCell) // other decisions: another index
	return &c
}
