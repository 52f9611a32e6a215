package app

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"rootkeeper/app/policy"
)

// withPolicy applies p for the test.
func withPolicy(t *testing.T, p policy.Policy) {
	t.Helper()
	old := Policy()
	if p.Source == "" {
		p.Source = "/etc/rootkeeper/policy.json"
	}
	SetPolicy(p)
	t.Cleanup(func() { SetPolicy(old) })
}

// TestPolicyRefuses: every way of deciding asks the organisation's
// policy: a grant, a root, an allow once, a need inside a neverGrant rule;
// a denied server; a server run unconfined where confinement is required;
// and a broken policy refuses every grant. Each refusal names the rule
// and says the organisation set it.
func TestPolicyRefuses(t *testing.T) {
	home := homeForPolicy()
	withPolicy(t, policy.Policy{
		NeverGrant:         []string{"~/.ssh", "/srv/secret"},
		RequireConfinement: true,
		DeniedServers:      []policy.ServerRule{{Command: "npx -y @evil/*"}},
	})
	var s State
	if err := s.AddServer(Server{Name: "fs", Type: TransportStdio, Command: "node", Confine: true}); err != nil {
		t.Fatal(err)
	}
	s.AddRoot(Root{Path: "/srv", Enabled: true})
	check := func(what string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), ByPolicy) {
			t.Errorf("%s: %v; want a refusal naming %q, set by the organisation", what, err, want)
		}
	}
	check("a root inside ~/.ssh", s.AddRoot(Root{Path: home + "/.ssh/keys"}), `"~/.ssh"`)
	check("a root inside /srv/secret", s.AddRoot(Root{Path: "/srv/secret"}), `"/srv/secret"`)
	if err := s.Decide(Decision{Server: "fs", Root: "/srv", Verdict: Allow}); err != nil {
		t.Errorf("a grant outside every rule: %v", err)
	}
	_, err := s.PutServer(Server{Name: "evil", Type: TransportStdio, Command: "npx", Args: []string{"-y", "@evil/x"}}, PutOptions{})
	check("a denied server", err, "deniedServers")
	_, err = s.PutServer(Server{Name: "free", Type: TransportStdio, Command: "node"}, PutOptions{Given: SetConfine})
	check("a server given unconfined", err, "must run confined")
	check("confinement turned off", s.SetConfinement("fs", false), "cannot run unconfined")
	if RunsUnconfinedHere(Server{Confine: true}, true) {
		t.Error("a server confined by default runs unconfined where Landlock is missing, though the policy requires confinement")
	}

	withPolicy(t, policy.Policy{AllowOnce: new(bool), ReachWait: "3s"})
	_, err = s.GrantOnce("fs", "/srv", nil, ByDialog, time.Now())
	check("allow once", err, "allow once is not offered")
	if w := s.ReachWait(); w != 3*time.Second {
		t.Errorf("reach wait %v, want the policy's 3s", w)
	}

	withPolicy(t, policy.Policy{Broken: `unknown key "nevergrant"`})
	if err := s.Decide(Decision{Server: "fs", Root: "/srv", Verdict: Allow}); err == nil || !strings.Contains(err.Error(), "nothing can be granted") {
		t.Errorf("a grant under a broken policy: %v", err)
	}
	if err := s.Decide(Decision{Server: "fs", Root: "/srv", Verdict: Deny}); err != nil {
		t.Errorf("a deny under a broken policy: %v", err)
	}
}

// BenchmarkRuleUnderPolicy: the one rule worked out for 1,000 roots and
// 20 servers (every snapshot after a grant pays it), with no policy (the
// anchor) and under a policy of five neverGrant globs and three server
// rules, which it checks for each root and each server.
func BenchmarkRuleUnderPolicy(b *testing.B) {
	var st State
	for i := range 20 {
		st.Servers = append(st.Servers, Server{Name: fmt.Sprintf("s%02d", i), Type: TransportStdio, Command: "npx", Args: []string{"-y", fmt.Sprintf("@scope/server-%d", i)}})
	}
	health := map[string]Health{}
	for i := range 1000 {
		p := fmt.Sprintf("/home/ann/src/project-%04d", i)
		st.Roots = append(st.Roots, Root{Path: p, Enabled: true})
		health[p] = Health{Status: HealthOK}
		for _, srv := range st.Servers {
			st.Decisions = append(st.Decisions, Decision{Server: srv.Name, Root: p, Verdict: Allow, Scope: Always})
		}
	}
	pol := policy.Policy{Source: "bench",
		NeverGrant:    []string{"~/.ssh", "~/.gnupg", "~/.*/credentials", "/etc", "~/src/*-secret"},
		DeniedServers: []policy.ServerRule{{Name: "evil*"}, {Command: "npx -y @bad/*"}, {URL: "https://x.example/*"}}}
	for _, c := range []struct {
		name string
		p    policy.Policy
	}{{"no-policy", policy.Policy{}}, {"policy", pol}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				snap := &Snapshot{State: st, Health: health, Policy: c.p}
				if len(Visible(snap, "s07")) != 1000 {
					b.Fatal("the rule lost roots")
				}
			}
		})
	}
}

// TestPolicyNetwork: the policy's network rules bind every server —
// network.default bounds a new server's setting (ask makes an open one
// ask, a known-local server stays off; off makes every one off), and
// network.never refuses its destinations whatever the server's setting
// and whatever the person allowed: the contact, the lookup of a name it
// matches on every port, and an allow of it (named, nothing changed). A
// broken policy refuses every contact.
func TestPolicyNetwork(t *testing.T) {
	withPolicy(t, policy.Policy{Network: &policy.NetworkRules{Default: "ask", Never: []string{"*.pastebin.com:*", "203.0.113.9:443"}}})
	var s State
	put := func(srv Server) Server {
		t.Helper()
		res, err := s.PutServer(srv, PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Server
	}
	if got := put(Server{Name: "web", Type: TransportStdio, Command: "some-fetch-server"}); got.NetworkOf().Mode != NetworkAsk {
		t.Errorf("a new unknown server under default ask: %+v", got.Network)
	}
	if got := put(Server{Name: "mem", Type: TransportStdio, Command: "mcp-server-memory"}); got.NetworkOf().Mode != NetworkOff {
		t.Errorf("a known-local server under default ask: %+v", got.Network)
	}
	if err := s.SetServerNetwork("web", NetworkSetting{Mode: NetworkOpen}, ""); err != nil {
		t.Fatal(err)
	}
	web, _ := s.Server("web")
	paste := NetContact{Proto: ProtoTCP, Name: "eu.pastebin.com", Addr: netip.MustParseAddrPort("198.51.100.3:443")}
	other := NetContact{Proto: ProtoTCP, Name: "api.example.com", Addr: netip.MustParseAddrPort("198.51.100.4:443")}
	byAddr := NetContact{Proto: ProtoTCP, Addr: netip.MustParseAddrPort("203.0.113.9:443")}
	if v := DecideContact(web, paste, nil, nil); v != NetRefuse {
		t.Errorf("a never destination of an open server: %v", v)
	}
	if v := DecideContact(web, byAddr, nil, nil); v != NetRefuse {
		t.Errorf("a never address of an open server: %v", v)
	}
	if v := DecideContact(web, other, nil, nil); v != NetAllow {
		t.Errorf("another destination of an open server: %v", v)
	}
	if LookupAllowed(web, "eu.pastebin.com") || !LookupAllowed(web, "api.example.com") {
		t.Error("lookups: a never name looked up, or another refused")
	}
	before := s.Clone()
	err := s.NetworkAllow("web", "eu.pastebin.com:443", "")
	if err == nil || !strings.Contains(err.Error(), "*.pastebin.com:*") || !strings.Contains(err.Error(), ByPolicy) {
		t.Errorf("allowing a never destination: %v", err)
	}
	if after, _ := s.Server("web"); !slices.Equal(after.NetworkOf().Allow, before.Servers[0].NetworkOf().Allow) {
		t.Errorf("the refused allow changed the server: %+v", after.Network)
	}
	if err := s.NetworkAllow("web", "api.example.com:443", ""); err != nil {
		t.Errorf("allowing another destination: %v", err)
	}

	withPolicy(t, policy.Policy{Network: &policy.NetworkRules{Default: "off"}})
	if got := put(Server{Name: "web2", Type: TransportStdio, Command: "some-fetch-server"}); got.NetworkOf().Mode != NetworkOff {
		t.Errorf("a new server under default off: %+v", got.Network)
	}
	withPolicy(t, policy.Policy{Broken: "line 3: not JSON"})
	if v := DecideContact(web, other, nil, nil); v != NetRefuse {
		t.Errorf("a contact under a broken policy: %v", v)
	}
	if !strings.Contains(PolicyText(), "line 3") {
		t.Errorf("PolicyText: %q", PolicyText())
	}
}
