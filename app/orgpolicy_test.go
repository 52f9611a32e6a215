package app

import (
	"fmt"
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
