package app

import (
	"slices"
	"strings"
	"time"
)

// ShortCallID is the least length of a waiting call's short id.
const ShortCallID = 6

// ShortCallIDs gives each of calls its short id, by ID: the shortest
// beginning of its ID, ShortCallID characters or more, that begins no
// other call's ID (the whole ID when it is that short). The IDs are random
// (mcp's reach watch makes them), so six characters nearly always do.
func ShortCallIDs(calls []ReachCall) map[string]string {
	out := make(map[string]string, len(calls))
	for _, c := range calls {
		n := min(ShortCallID, len(c.ID))
		for n < len(c.ID) && slices.ContainsFunc(calls, func(o ReachCall) bool {
			return o.ID != c.ID && strings.HasPrefix(o.ID, c.ID[:n])
		}) {
			n++
		}
		out[c.ID] = c.ID[:n]
	}
	return out
}

// ShortIDs is reqs, one server's requests, with the Short id of every call
// waiting at now set: unique among all the calls of that server waiting
// then, whichever folder they wait on. reqs itself is not changed (its
// calls are copied).
func ShortIDs(reqs []Request, now time.Time) []Request {
	var waiting []ReachCall
	for _, r := range reqs {
		waiting = append(waiting, r.Waiting(now)...)
	}
	short := ShortCallIDs(waiting)
	out := slices.Clone(reqs)
	for i := range out {
		if len(out[i].Waiting(now)) == 0 {
			continue
		}
		out[i].Calls = slices.Clone(out[i].Calls)
		for j := range out[i].Calls {
			out[i].Calls[j].Short = short[out[i].Calls[j].ID]
		}
	}
	return out
}

// GrantOnceCalls answers, with allow once given at at, the calls of server
// that refs name, each by its ID or by its short id as `status` showed it
// (ShortIDs), on whichever of server's reach requests they wait: the only
// way a call that changes something goes through once from the command
// line, since naming a path lets through only reads (OnceCalls). Each
// request a named call waits on is answered as GrantOnce answers it: the
// calls named are let through, each with its own access, and its other
// calls are refused. A ref that names no call of server waiting at at, or
// a request whose named calls allow once can answer none of, is an
// InputError naming it, and then nothing changes.
func (s *State) GrantOnceCalls(server string, refs []string, by Source, at time.Time) ([]OnceAnswer, error) {
	if _, ok := s.Server(server); !ok {
		return nil, inputErrorf("no server %q", server)
	}
	reqs := ShortIDs(s.RequestsFor(server), at)
	named := map[string][]string{} // call IDs, by the folder they wait on
	var folders []string
	for _, ref := range refs {
		r, c, ok := namedCall(reqs, ref, at)
		if !ok {
			return nil, inputErrorf("%q names no call of %s waiting now (`rootkeeper status` lists them, with their ids; a call waits only while you are asked)", ref, server)
		}
		if !slices.Contains(folders, r.Path) {
			folders = append(folders, r.Path)
		}
		if !slices.Contains(named[r.Path], c.ID) {
			named[r.Path] = append(named[r.Path], c.ID)
		}
	}
	// Refuse before anything changes: a request where allow once can let
	// none of the named calls through.
	for _, f := range folders {
		r, _ := s.Request(server, f)
		ans := OnceAnswer{Server: server, Folder: f}
		for _, c := range r.Waiting(at) {
			if slices.Contains(named[f], c.ID) && c.NotOnce != "" {
				ans.NotLet = append(ans.NotLet, c)
			} else if slices.Contains(named[f], c.ID) {
				ans.Let = append(ans.Let, c)
			}
		}
		if len(ans.Let) == 0 {
			return nil, &InputError{Msg: onceRefusal(ans)}
		}
	}
	var out []OnceAnswer
	for _, f := range folders {
		ans, err := s.GrantOnce(server, f, named[f], by, at)
		if err != nil {
			return nil, err
		}
		out = append(out, ans)
	}
	return out, nil
}

// namedCall finds the call ref names among the calls of reqs waiting at
// now (Short set): the one whose ID it is, else the one whose short id.
func namedCall(reqs []Request, ref string, now time.Time) (Request, ReachCall, bool) {
	for _, match := range []func(ReachCall) bool{
		func(c ReachCall) bool { return c.ID == ref },
		func(c ReachCall) bool { return c.Short == ref },
	} {
		for _, r := range reqs {
			if r.From != FromReach && r.From != FromNetwork {
				continue
			}
			for _, c := range r.Waiting(now) {
				if ref != "" && match(c) {
					return r, c, true
				}
			}
		}
	}
	return Request{}, ReachCall{}, false
}
