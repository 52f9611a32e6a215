package app

import (
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
