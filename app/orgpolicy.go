package app

import (
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"rootkeeper/app/policy"
)

// The organisation's policy (app/policy) decides what nobody on the
// machine can allow. It is the machine's, not the person's, so it lives
// beside the state rather than in it: the process that runs (the app, a
// command, a bridge) loads it at its start (SetPolicy; the app watches it
// and sets it again when it changes), and every way of deciding in this
// package asks it — a grant, a need, an allow once, a root added, a
// server stored, confinement turned off. What it refuses is an InputError
// that says the organisation set it and which rule, so that the window,
// the command line and a bridge all say the same.

var current atomic.Pointer[policy.Policy]

// SetPolicy makes p the policy this process applies.
func SetPolicy(p policy.Policy) { current.Store(&p) }

// Policy is the policy this process applies (the zero Policy, which
// decides nothing, until SetPolicy).
func Policy() policy.Policy {
	if p := current.Load(); p != nil {
		return *p
	}
	return policy.Policy{}
}

// ByPolicy marks what the organisation's policy set: the window and
// status say "set by your organisation".
const ByPolicy = "set by your organisation"

// policyError is a refusal of the organisation's policy, in one line.
func policyError(format string, args ...any) error {
	e := inputErrorf(format, args...)
	e.(*InputError).Msg += " (" + ByPolicy + ": " + Policy().Source + ")"
	return e
}

// homeForPolicy is the home folder "~" means in the policy's rules: this
// person's.
func homeForPolicy() string {
	h, _ := os.UserHomeDir()
	return h
}

// policyRefusesGrant says why the policy refuses to let server see path
// (a root, a slot, a need, an allow once), nil when it does not: a broken
// policy refuses every grant; a neverGrant rule refuses the folders it
// holds.
func policyRefusesGrant(path string) error {
	p := Policy()
	if why := p.Refusal(); why != "" {
		return &InputError{Msg: why}
	}
	if rule := p.NeverGranted(path, homeForPolicy()); rule != "" {
		return policyError("%s is never granted: the rule %q holds it", path, rule)
	}
	return nil
}

// NeverGranted reports the neverGrant rule that holds path, "" for none:
// a confined server's attempt there is refused at once, never asked.
func NeverGranted(path string) string {
	return Policy().NeverGranted(path, homeForPolicy())
}

// NeverGrantedBeneath are the folders and files inside root that the
// policy's neverGrant rules hold: a server granted root must still not
// reach them (its confinement protects them).
func NeverGrantedBeneath(root string) []string {
	var out []string
	for _, p := range Policy().NeverGrantedBeneath(root, homeForPolicy()) {
		if IsWithin(p, root) {
			out = append(out, p)
		}
	}
	return out
}

// policyRefusesServer says why the policy refuses srv (stored, imported,
// protected, started), nil when it does not: a denied server, or one
// run unconfined where confinement is required.
func policyRefusesServer(srv Server) error {
	p := Policy()
	if why := p.Denied(policy.Server{Name: srv.Name, Command: srv.Command, Args: srv.Args, URL: srv.URL}); why != "" {
		return policyError("server %q is blocked: %s", srv.Name, why)
	}
	if p.RequireConfinement && srv.Type == TransportStdio && !srv.Confine {
		return policyError("server %q must run confined: every stdio server does here", srv.Name)
	}
	return nil
}

// BlockedServer says why the policy blocks srv ("" when it does not), for
// a server stored before the policy came: it is not started, and a bridge
// for it answers its host with this.
func BlockedServer(srv Server) string {
	if err := policyRefusesServer(srv); err != nil {
		return err.Error()
	}
	return ""
}

// ConfinementRequired reports whether the policy requires every stdio
// server to run confined.
func ConfinementRequired() bool { return Policy().RequireConfinement }

// OnceAllowed reports whether allow once may be offered.
func OnceAllowed() bool { return Policy().OnceAllowed() }

// policyReachWait is the reach wait the policy sets, if it sets one.
func policyReachWait() (time.Duration, bool) { return Policy().WaitFor() }

// PolicyText is the one line the window and doctor show of the policy:
// where it is read from and what it sets, or why it cannot be used; ""
// when there is none.
func PolicyText() string {
	p := Policy()
	if !p.Set() {
		return ""
	}
	if p.Broken != "" {
		return p.Refusal()
	}
	var sets []string
	if len(p.NeverGrant) > 0 {
		sets = append(sets, "never granted: "+strings.Join(p.NeverGrant, ", "))
	}
	if p.RequireConfinement {
		sets = append(sets, "every stdio server confined")
	}
	if p.AllowedServers != nil {
		sets = append(sets, "only the servers it allows")
	}
	if len(p.DeniedServers) > 0 {
		sets = append(sets, "servers it denies")
	}
	if d, ok := p.WaitFor(); ok {
		sets = append(sets, "reach wait "+d.String())
	}
	if !p.OnceAllowed() {
		sets = append(sets, "no allow once")
	}
	if n := p.Network; n != nil && n.Default != "" {
		sets = append(sets, "new servers' network "+n.Default)
	}
	if n := p.Network; n != nil && len(n.Never) > 0 {
		sets = append(sets, "never reached: "+strings.Join(n.Never, ", "))
	}
	if len(p.AuditTo) > 0 {
		sets = append(sets, "decisions also logged to "+strings.Join(p.AuditTo, ", "))
	}
	if len(sets) == 0 {
		sets = append(sets, "nothing")
	}
	return "your organisation's policy (" + p.Source + ") sets " + strings.Join(sets, "; ")
}

// policyNetworkDefault bounds the network a new server is put with by the
// policy's default: "off" makes it off; "ask" makes an open one ask (a
// stricter default of the server's own, off or only, stays); "open" or
// none changes nothing.
func policyNetworkDefault(n *NetworkSetting) *NetworkSetting {
	rules := Policy().Network
	if n == nil || rules == nil {
		return n
	}
	switch {
	case rules.Default == string(NetworkOff):
		return &NetworkSetting{Mode: NetworkOff}
	case rules.Default == string(NetworkAsk) && n.Mode == NetworkOpen:
		return &NetworkSetting{Mode: NetworkAsk, Allow: slices.Clone(n.Allow), Deny: slices.Clone(n.Deny)}
	}
	return n
}

// policyRefusesContact reports whether the policy refuses contact c
// whatever the server's setting: a broken policy refuses every contact (as
// it refuses every grant), a network.never entry the ones it matches.
func policyRefusesContact(c NetContact, resolve func(string) []netip.Addr) bool {
	p := Policy()
	if p.Broken != "" {
		return true
	}
	return p.Network != nil && anyMatches(p.Network.Never, c, resolve)
}

// policyRefusesLookup reports whether the policy refuses to have name
// looked up: a broken policy, or a never entry that matches the name on
// every port.
func policyRefusesLookup(name string) bool {
	p := Policy()
	if p.Broken != "" {
		return true
	}
	if p.Network == nil {
		return false
	}
	for _, e := range p.Network.Never {
		if d, err := parseDest(e); err == nil && d.port == 0 && d.couldName(name) {
			return true
		}
	}
	return false
}

// policyRefusesAllow says why the policy refuses dest (read) as a
// destination a person allows, nil when it does not: a never entry that
// matches it (a name, an address or a socket, on its port), or a broken
// policy.
func policyRefusesAllow(dest destPattern) error {
	p := Policy()
	if why := p.Refusal(); why != "" {
		return policyError("%s is not allowed: %s", dest, why)
	}
	if p.Network == nil {
		return nil
	}
	for _, e := range p.Network.Never {
		never, err := parseDest(e)
		if err != nil || !never.covers(dest) {
			continue
		}
		return policyError("%s is never reached: the policy's network.never has %s", dest, e)
	}
	return nil
}

// PolicyFor is what the organisation's policy sets for srv, one line each
// ("blocked: …", "runs confined: required", "never reaches: …", "no allow
// once", "reach wait 30s"); nil when it sets nothing for it.
func PolicyFor(srv Server) []string {
	p := Policy()
	if !p.Set() {
		return nil
	}
	if p.Broken != "" {
		return []string{p.Refusal()}
	}
	var out []string
	if why := BlockedServer(srv); why != "" {
		out = append(out, "blocked: "+why)
	}
	stdio := srv.Type == TransportStdio
	if stdio && p.RequireConfinement {
		out = append(out, "runs confined: required")
	}
	if n := p.Network; stdio && n != nil && len(n.Never) > 0 {
		out = append(out, "never reaches: "+strings.Join(n.Never, ", "))
	}
	if stdio && !p.OnceAllowed() {
		out = append(out, "no allow once: lasting decisions only")
	}
	if d, ok := p.WaitFor(); ok && stdio {
		out = append(out, "a call past its folders waits "+d.String()+" for you")
	}
	return out
}

// SetAsideByPolicy are the roots server has an allow decision for that the
// policy never grants, each with the rule: decisions the person made that
// do not apply while the policy holds them (Visible hides those roots).
func SetAsideByPolicy(s *State, server string) map[string]string {
	var out map[string]string
	for _, d := range s.Decisions {
		if d.Server != server || d.Verdict != Allow {
			continue
		}
		if rule := NeverGranted(d.Root); rule != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[d.Root] = rule
		}
	}
	return out
}
