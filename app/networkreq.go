package app

import (
	"slices"
	"strings"
	"time"

	"rootkeeper/app/words"
)

// A confined server's first contact with a destination its network
// setting does not decide is a request, like a folder it reached for
// (reach.go): a Request FromNetwork whose Path is the destination
// ("api.tavily.com:443", "unix:/run/mysqld/mysqld.sock") and whose calls
// are the connects waiting on it. The window asks it in the same dialog,
// tray and banner as a folder; `status` lists it; the answers are allow
// once (GrantOnce: exactly the connects shown), allow always
// (NetworkAllow) and deny (NetworkDeny: remembered). With nobody to ask
// the connect is refused at once and the request waits for the person.

// FromNetwork is Request.From for a destination a confined server tried
// to reach that its network setting does not decide.
const FromNetwork = "network"

// What a network call does (ReachCall.Op, Request.Op).
const (
	OpConnect = "connect" // connect to a destination
	OpLookup  = "look up" // look a name up (refused in mode only)
)

// MaxNetworkRequestsPerServer bounds the open network requests of one
// server, apart from its folder requests: a server trying a thousand
// addresses pushes out its own oldest network requests, never a folder
// its configuration names.
const MaxNetworkRequestsPerServer = 32

// AskNetwork records call (a connect of server to dest, or a lookup) on
// the request for dest, and says until when the call is to wait for the
// person's answer (zero: refuse it now), as AskReach does for a folder:
// with asking a new request is raised and waits State.ReachWait; a call
// on a destination being asked joins it; one asked before and not
// answered, or asked of nobody, is refused at once. Without asking the
// request is recorded, Unasked, and the call refused now. addr is the
// address the destination was reached at, when its name is shown ("" for
// none).
func (s *State) AskNetwork(server, dest, addr string, call ReachCall, now time.Time, asking bool) (time.Time, error) {
	if i := slices.IndexFunc(s.Requests, func(r Request) bool { return r.Server == server && r.Path == dest }); i >= 0 {
		r := &s.Requests[i]
		if r.From != FromNetwork || len(r.Waiting(now)) == 0 || len(r.Calls) >= MaxReachCalls {
			return time.Time{}, nil
		}
		r.Calls = append(slices.Clip(r.Calls), call)
		return r.Until, nil
	}
	if _, ok := s.Server(server); !ok {
		return time.Time{}, inputErrorf("no server %q", server)
	}
	r := Request{Server: server, Path: dest, From: FromNetwork, First: now, Last: now, Tried: addr, Op: call.Op}
	if asking {
		r.Calls = []ReachCall{call}
		r.Until = now.Add(s.ReachWait())
	} else {
		r.Unasked = true
	}
	s.Requests = append(s.Requests, r)
	s.trimNetworkRequests(server)
	slices.SortFunc(s.Requests, func(a, b Request) int {
		if c := compareStrings(a.Server, b.Server); c != 0 {
			return c
		}
		return compareStrings(a.Path, b.Path)
	})
	return r.Until, nil
}

// trimNetworkRequests keeps server's newest MaxNetworkRequestsPerServer
// network requests, and all its others.
func (s *State) trimNetworkRequests(server string) {
	var mine []Request
	for _, r := range s.Requests {
		if r.Server == server && r.From == FromNetwork {
			mine = append(mine, r)
		}
	}
	if len(mine) <= MaxNetworkRequestsPerServer {
		return
	}
	slices.SortFunc(mine, func(a, b Request) int { return b.Last.Compare(a.Last) })
	keep := map[string]bool{}
	for _, r := range mine[:MaxNetworkRequestsPerServer] {
		keep[r.Path] = true
	}
	s.Requests = slices.DeleteFunc(s.Requests, func(r Request) bool {
		return r.Server == server && r.From == FromNetwork && !keep[r.Path]
	})
}

// dropNetworkRequest forgets server's network request for dest, if any.
func (s *State) dropNetworkRequest(server, dest string) {
	s.Requests = slices.DeleteFunc(s.Requests, func(r Request) bool {
		return r.Server == server && r.Path == dest && r.From == FromNetwork
	})
}

// NetworkAnswer is the decision the person's answer to a network request
// makes: allow (always: the destination joins the server's allowed ones)
// or deny (remembered).
func (s *State) NetworkAnswer(r Request, allow bool, home string) error {
	if r.From != FromNetwork {
		return inputErrorf("%s's request for %q is not a network destination", r.Server, r.Path)
	}
	if allow {
		return s.NetworkAllow(r.Server, r.Path, home)
	}
	return s.NetworkDeny(r.Server, r.Path, home)
}

// networkText is RequestText for a network request: "fs tried to connect
// to api.tavily.com:443 (203.0.113.7:443) — allow it?", or for a lookup
// mode only refused, "fs looked up x.example.com, which is not in its
// list — allow x.example.com?".
func networkText(r Request, name func(string) string) string {
	if r.Op == OpLookup {
		host := strings.TrimSuffix(r.Path, ":*")
		return words.SafeText(name(r.Server) + " looked up " + host + ", which is not in its list — allow " + host + "?")
	}
	dest := r.Path
	if r.Tried != "" && r.Tried != r.Path {
		dest += " (" + r.Tried + ")"
	}
	return words.SafeText(name(r.Server) + " tried to connect to " + dest + " — allow it?")
}
