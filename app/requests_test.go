package app

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func requestState(t *testing.T) *State {
	t.Helper()
	st := &State{}
	if err := st.AddServer(Server{Name: "fs", Type: TransportStdio, Command: "srv"}); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestRequestsAreRecordedOnceAndDecidedLikeRoots(t *testing.T) {
	st := requestState(t)
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if changed, err := st.AddRequest("fs", "/home/me/src/x", "claude-code 2.1.330", at); !changed || err != nil {
		t.Fatalf("first request: %v %v", changed, err)
	}
	if changed, _ := st.AddRequest("fs", "/home/me/src/x", "claude-code 2.1.330", at.Add(time.Second)); changed {
		t.Error("the same request again a second later was written again")
	}
	if _, err := st.AddRequest("ghost", "/x", "h", at); err == nil {
		t.Error("a request for an unknown server was accepted")
	}
	if _, err := st.AddRequest("fs", "relative/x", "h", at); err == nil {
		t.Error("a relative path was accepted")
	}
	// Never visible by itself.
	snap := &Snapshot{State: *st, Health: map[string]Health{"/home/me/src/x": {Status: HealthOK}}}
	if v := VisiblePaths(snap, "fs"); len(v) != 0 {
		t.Fatalf("a request is visible: %q", v)
	}
	// Granting it makes it a root, records the decision, drops the request.
	if err := st.DecideRequest(Decision{Server: "fs", Root: "/home/me/src/x", Verdict: Allow, By: ByCommandLine}); err != nil {
		t.Fatal(err)
	}
	r, ok := st.Root("/home/me/src/x")
	if !ok || !r.Enabled || r.Source != SourceRequested {
		t.Fatalf("root after the grant: %+v %v", r, ok)
	}
	if len(st.Requests) != 0 {
		t.Fatalf("requests left: %v", st.Requests)
	}
	// Decided, or covered by an allowed parent: no request.
	if changed, _ := st.AddRequest("fs", "/home/me/src/x", "h", at); changed {
		t.Error("a decided folder became a request again")
	}
	if changed, _ := st.AddRequest("fs", "/home/me/src/x/sub", "h", at); changed {
		t.Error("a folder inside an allowed one became a request")
	}
	// Bounded per server: the oldest give way.
	for i := range MaxRequestsPerServer + 10 {
		st.AddRequest("fs", fmt.Sprintf("/flood/%03d", i), "hostile", at.Add(time.Duration(i)*time.Hour))
	}
	if n := len(st.RequestsFor("fs")); n != MaxRequestsPerServer {
		t.Fatalf("%d requests kept, want %d", n, MaxRequestsPerServer)
	}
	if _, ok := st.Request("fs", "/flood/000"); ok {
		t.Error("the oldest request was kept over newer ones")
	}
	// Removing the server drops its requests.
	st.RemoveServer("fs")
	if len(st.Requests) != 0 {
		t.Error("requests outlived their server")
	}
}

// VisibleFor in follow mode, over random trees of allowed and refused
// folders and host folders: never more than allowed, only what the host
// works in, never a refused folder (or one inside a refused folder within
// the allowed root), and all of the rest. In request mode it is Visible.
func TestVisibleForFollowsTheHostWithinTheAllowedSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 28))
	tree := []string{"/h", "/h/src", "/h/src/a", "/h/src/a/b", "/h/src/c", "/h/docs", "/h/docs/x", "/opt", "/opt/p"}
	for range 20_000 {
		st := State{Servers: []Server{{Name: "fs", Type: TransportStdio, Command: "x", HostRoots: HostRootsFollow}}}
		health := map[string]Health{}
		var denied []string
		for _, p := range tree {
			switch rng.IntN(5) {
			case 0, 1:
				st.Roots = append(st.Roots, Root{Path: p, Enabled: true})
				health[p] = Health{Status: HealthOK}
				st.Decisions = append(st.Decisions, Decision{Server: "fs", Root: p, Verdict: Allow, Scope: Always})
			case 2:
				st.Decisions = append(st.Decisions, Decision{Server: "fs", Root: p, Verdict: Deny, Scope: Always})
				denied = append(denied, p)
			}
		}
		// refusedIn: a refused folder between root r (exclusive) and h.
		refusedIn := func(h, r string) bool {
			return slices.ContainsFunc(denied, func(d string) bool { return IsWithin(h, d) && IsWithin(d, r) && d != r })
		}
		var host []string
		for _, p := range tree {
			if rng.IntN(4) == 0 {
				host = append(host, p)
			}
		}
		snap := &Snapshot{State: st, Health: health}
		vis := VisiblePaths(snap, "fs")
		var got []string
		for _, r := range VisibleFor(snap, "fs", host) {
			got = append(got, r.Path)
		}
		within := func(p string, set []string) bool {
			return slices.ContainsFunc(set, func(q string) bool { return IsWithin(p, q) })
		}
		for _, p := range got {
			if !within(p, vis) {
				t.Fatalf("host %q, allowed %q: %s is more than allowed", host, vis, p)
			}
			if !within(p, host) {
				t.Fatalf("host %q, allowed %q: %s is not where the host works", host, vis, p)
			}
		}
		for _, p := range got {
			if !slices.Contains(vis, p) && !slices.ContainsFunc(vis, func(r string) bool { return IsWithin(p, r) && !refusedIn(p, r) }) {
				t.Fatalf("host %q, allowed %q, denied %q: %s is refused", host, vis, denied, p)
			}
		}
		for _, h := range host {
			for _, r := range vis {
				if IsWithin(h, r) && !refusedIn(h, r) && !slices.Contains(got, h) {
					t.Fatalf("host %q, allowed %q: missing %s", host, vis, h)
				}
				if IsWithin(r, h) && !slices.Contains(got, r) {
					t.Fatalf("host %q, allowed %q: missing %s", host, vis, r)
				}
			}
		}
		st.Servers[0].HostRoots = HostRootsRequest
		snap = &Snapshot{State: st, Health: health}
		var plain []string
		for _, r := range VisibleFor(snap, "fs", host) {
			plain = append(plain, r.Path)
		}
		if !slices.Equal(plain, vis) {
			t.Fatalf("request mode: %q, want Visible %q", plain, vis)
		}
	}
}

// BridgeText says who the host is, the protocol, the server's pid and how
// many roots it was sent, and neutralises what the host chose to call
// itself.
func TestBridgeText(t *testing.T) {
	got := BridgeText(BridgeSession{Host: "evil\x1b]0;owned\x07", HostVersion: "1", ProtocolVersion: "2025-06-18", PID: 42,
		LastSent: []string{"file:///a", "file:///b"}, LastSentAt: time.Now()})
	if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, "protocol 2025-06-18, server pid 42") || !strings.HasSuffix(got, "last sent 2 roots") {
		t.Errorf("BridgeText = %q", got)
	}
	if got := BridgeText(BridgeSession{}); got != "bridged for a host, no roots sent yet" {
		t.Errorf("BridgeText of nothing = %q", got)
	}
}
