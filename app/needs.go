package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// A Need is a folder a confined server needs to run — the settings its
// tool reads (~/.kube for a Kubernetes server), a settings folder it
// makes — allowed to that server alone. It is in that server's ruleset
// (read-write, like the folders of its own; Rootkeeper's state folder
// stays protected inside it), and nowhere else: it is no root, so it is
// not in the server's roots/list answer, not shown to other servers, not
// in the person's list of roots. A need comes only from a question about
// that folder: a confined server's reach (a request FromReach) or the
// failure of its confined start (ConfineFailure.Folder), answered with
// allow (AllowAsked); a folder that is already a root is decided as a
// root instead. Revoking it (RevokeNeed) restarts the server under the
// narrower ruleset. A server that comes to run another program loses its
// needs, as it loses its decisions (PutServer).
type Need struct {
	Server string `json:"server"`
	// Path is the folder's canonical path.
	Path string `json:"path"`
	// Access is what the server may do in it: NeedReadWrite.
	Access string `json:"access"`
	// Scope says how long it lasts: Always, or UntilQuit (dropped when
	// the app quits, as such decisions are).
	Scope Scope     `json:"scope"`
	At    time.Time `json:"at"`
	By    Source    `json:"by"`
}

// NeedReadWrite is Need.Access for a folder the server may read and write.
const NeedReadWrite = "read-write"

// NeedPlace says where the person's folders are, which a need may never
// be: Home is the home folder (a need is never it, nor a folder that holds
// it, such as / or /home), StateDir Rootkeeper's state folder (a need is
// never it nor inside it).
type NeedPlace struct {
	Home, StateDir string
}

// CheckNeed says why path cannot be a folder a server needs to run, or
// nil when it can.
func CheckNeed(path string, p NeedPlace) error {
	if err := ValidAbsPath(path); err != nil {
		return &InputError{Msg: err.Error()}
	}
	path = filepath.Clean(path)
	if path == string(filepath.Separator) {
		return inputErrorf("%s cannot be a folder a server needs to run: it is the whole disk", path)
	}
	if p.Home != "" && (path == p.Home || IsWithin(p.Home, path)) {
		return inputErrorf("%s cannot be a folder a server needs to run: it is or holds your home folder", path)
	}
	if p.StateDir != "" {
		state := []string{filepath.Clean(p.StateDir)}
		if r, err := filepath.EvalSymlinks(p.StateDir); err == nil {
			state = append(state, r)
		}
		for _, st := range state {
			if path == st || IsWithin(path, st) {
				return inputErrorf("%s cannot be a folder a server needs to run: it is inside Rootkeeper's state folder, which holds your decisions", path)
			}
		}
	}
	return nil
}

// NeedsOf lists the folders server needs to run, by path.
func (s *State) NeedsOf(server string) []Need {
	var out []Need
	for _, n := range s.Needs {
		if n.Server == server {
			out = append(out, n)
		}
	}
	return out
}

// Need returns server's need for path, if it has one.
func (s *State) Need(server, path string) (Need, bool) {
	for _, n := range s.Needs {
		if n.Server == server && n.Path == path {
			return n, true
		}
	}
	return Need{}, false
}

// needed reports whether path is inside (or is) a folder server needs.
func (s *State) needed(server, path string) bool {
	for _, n := range s.Needs {
		if n.Server == server && (path == n.Path || IsWithin(path, n.Path)) {
			return true
		}
	}
	return false
}

// addNeed records n (replacing server's earlier need for the same path)
// and drops the requests it answers: the folder's, and those of folders
// inside it.
func (s *State) addNeed(n Need) {
	s.RevokeNeed(n.Server, n.Path)
	s.Needs = append(s.Needs, n)
	slices.SortFunc(s.Needs, func(a, b Need) int {
		if c := compareStrings(a.Server, b.Server); c != 0 {
			return c
		}
		return compareStrings(a.Path, b.Path)
	})
	s.Requests = slices.DeleteFunc(s.Requests, func(r Request) bool {
		return r.Server == n.Server && (r.Path == n.Path || IsWithin(r.Path, n.Path))
	})
}

// RevokeNeed takes the folder path from the folders server needs to run;
// it reports whether it was one. The server restarts under the narrower
// ruleset.
func (s *State) RevokeNeed(server, path string) bool {
	n := len(s.Needs)
	s.Needs = slices.DeleteFunc(s.Needs, func(x Need) bool { return x.Server == server && x.Path == path })
	return len(s.Needs) != n
}

// AllowAsked is the person's allow of folder for server, asked about by a
// confined server's reach (its request FromReach) or offered by the
// failure of its confined start (ConfineFailure.Folder). A folder that is
// a root is decided as a root: the decision is recorded (asRoot). Any
// other becomes a folder that server alone needs to run (a Need, see
// there), never a root: place says where a need may not be. A settings
// folder of the server's own that its failure named (ConfineFailure.Own)
// is made first (0700), as the server would have made it. The request
// goes, and so does the failure that offered the folder.
func (s *State) AllowAsked(server, folder string, scope Scope, by Source, at time.Time, place NeedPlace) (asRoot bool, err error) {
	if _, ok := s.Server(server); !ok {
		return false, inputErrorf("no server %q", server)
	}
	if scope == "" {
		scope = Always
	}
	req, asked := s.Request(server, folder)
	asked = asked && req.From == FromReach
	fail, failed := s.ConfineFailureOf(server)
	failed = failed && fail.Folder != "" && fail.Folder == folder
	if s.Unrefuse(server, folder) {
		asked = true // refused before: the person changes their mind
	}
	if !asked && !failed {
		return false, inputErrorf("%s has asked for no folder %q (allowing a folder a server needs answers its reach or the failure of its confined start)", server, folder)
	}
	d := Decision{Server: server, Root: folder, Verdict: Allow, Scope: scope, At: at, By: by}
	if _, isRoot := s.Root(folder); isRoot {
		if asked {
			err = s.DecideRequest(d)
		} else {
			err = s.Decide(d)
		}
		if err == nil && failed {
			s.ClearConfineFailure(server)
		}
		return true, err
	}
	if err := CheckNeed(folder, place); err != nil {
		return false, err
	}
	if err := policyRefusesGrant(folder); err != nil {
		return false, err
	}
	if failed && fail.Own {
		if err := os.MkdirAll(folder, 0o700); err != nil {
			return false, fmt.Errorf("making %s: %w", folder, err)
		}
	}
	if at.IsZero() {
		at = time.Now().UTC()
	}
	s.addNeed(Need{Server: server, Path: folder, Access: NeedReadWrite, Scope: scope, At: at, By: by})
	if failed {
		s.ClearConfineFailure(server)
	}
	return false, nil
}

// AnswerRequest records the person's answer to request r: allow or deny,
// for scope, given by by at at. An allow of a confined server's reach for
// a folder that is not a root makes it a folder that server needs to run
// (AllowAsked); every other answer decides the folder like a root
// (DecideRequest).
func (s *State) AnswerRequest(r Request, allow bool, scope Scope, by Source, at time.Time, place NeedPlace) error {
	if r.From == FromNetwork {
		return s.NetworkAnswer(r, allow, place.Home) // a destination: its network's
	}
	if allow && r.From == FromReach {
		_, err := s.AllowAsked(r.Server, r.Path, scope, by, at, place)
		return err
	}
	if !allow && r.From == FromReach {
		if _, isRoot := s.Root(r.Path); !isRoot {
			return s.DenyAsked(r.Server, r.Path, by, at)
		}
	}
	return s.DecideRequest(RequestDecision(r, allow, scope, by))
}

// NeedPaths are the folders server needs to run in snap, sorted: with its
// visible roots and allowed slots, what its confined ruleset holds
// (ReachPaths).
func NeedPaths(snap *Snapshot, server string) []string {
	var out []string
	for _, n := range snap.State.Needs {
		if n.Server == server {
			out = append(out, n.Path)
		}
	}
	return out
}

// NeedsChanged lists, sorted, the servers whose needs differ between before
// and after: their confined ruleset changed, though what they see did not.
func NeedsChanged(before, after *Snapshot) []string {
	var a, b []Need
	if before != nil {
		a = before.State.Needs
	}
	if after != nil {
		b = after.State.Needs
	}
	names := map[string]bool{}
	for _, n := range a {
		if !slices.ContainsFunc(b, func(x Need) bool { return x.Server == n.Server && x.Path == n.Path }) {
			names[n.Server] = true
		}
	}
	for _, n := range b {
		if !slices.ContainsFunc(a, func(x Need) bool { return x.Server == n.Server && x.Path == n.Path }) {
			names[n.Server] = true
		}
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// A Refusal is a folder a confined server reached for (its request
// FromReach) that the person refused it: that server is never asked about
// it again, and, like a need, it is no root — it does not become every
// other server's question. Revoking it (Unrefuse, `revoke`) lets the next
// attempt ask again; allowing it (AllowAsked) replaces it. A server that
// comes to run another program loses its refusals, as it loses its
// decisions.
type Refusal struct {
	Server string    `json:"server"`
	Path   string    `json:"path"`
	At     time.Time `json:"at"`
	By     Source    `json:"by"`
}

// DenyAsked is the person's deny of folder, which server reached for (its
// open request FromReach): a Refusal, and the request goes. A folder that
// is a root is decided as a root (a deny decision).
func (s *State) DenyAsked(server, folder string, by Source, at time.Time) error {
	req, asked := s.Request(server, folder)
	if !asked || req.From != FromReach {
		return inputErrorf("%s has asked for no folder %q", server, folder)
	}
	if _, isRoot := s.Root(folder); isRoot {
		return s.DecideRequest(RequestDecision(req, false, Always, by))
	}
	if at.IsZero() {
		at = time.Now().UTC()
	}
	s.Unrefuse(server, folder)
	s.Refusals = append(s.Refusals, Refusal{Server: server, Path: folder, At: at, By: by})
	s.Requests = slices.DeleteFunc(s.Requests, func(r Request) bool {
		return r.Server == server && (r.Path == folder || IsWithin(r.Path, folder))
	})
	return nil
}

// Refused reports whether path is inside (or is) a folder the person
// refused server.
func (s *State) Refused(server, path string) bool {
	for _, r := range s.Refusals {
		if r.Server == server && (path == r.Path || IsWithin(path, r.Path)) {
			return true
		}
	}
	return false
}

// RefusalsOf lists the folders the person refused server.
func (s *State) RefusalsOf(server string) []Refusal {
	var out []Refusal
	for _, r := range s.Refusals {
		if r.Server == server {
			out = append(out, r)
		}
	}
	return out
}

// Unrefuse forgets the person's refusal of path to server; it reports
// whether there was one.
func (s *State) Unrefuse(server, path string) bool {
	n := len(s.Refusals)
	s.Refusals = slices.DeleteFunc(s.Refusals, func(r Refusal) bool { return r.Server == server && r.Path == path })
	return len(s.Refusals) != n
}
