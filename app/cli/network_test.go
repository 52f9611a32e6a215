package cli

import (
	"encoding/json"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/audit"
)

// The network verbs on the command line: each setting stored through
// PutServer, pin from the record, bad input named with exit 2 and nothing
// saved.
func TestServersNetworkVerbs(t *testing.T) {
	h := newHarness(t)
	h.ok("servers", "add", "s", "--network", "ask", "--", "server")
	h.ok("servers", "add", "web", "--url", "https://mcp.example.com/mcp")
	setting := func() app.NetworkSetting {
		st := h.store()
		srv, _ := st.Server("s")
		return srv.NetworkOf()
	}
	if n := setting(); n.Mode != app.NetworkAsk {
		t.Fatalf("added with --network ask: %+v", n)
	}
	h.ok("servers", "network", "s", "only", "API.example.com:443", "*.cdn.example:*", "[::1]:5432", "unix:/run/x/../db.sock")
	if n := setting(); n.Mode != app.NetworkOnly || !slices.Equal(n.Allow, []string{"api.example.com:443", "*.cdn.example:*", "[::1]:5432", "unix:/run/db.sock"}) {
		t.Errorf("only: %+v", n)
	}
	h.ok("servers", "network", "s", "deny", "api.example.com:443")
	h.ok("servers", "network", "s", "open")
	if n := setting(); n.Mode != app.NetworkOpen || !slices.Equal(n.Deny, []string{"api.example.com:443"}) || slices.Contains(n.Allow, "api.example.com:443") {
		t.Errorf("deny, then open: %+v", n)
	}
	h.fails(2, []string{"servers", "network", "s", "pin"}, "has reached nothing yet")
	rec := &app.NetworkRecorder{StateDir: h.dir, Server: "s"}
	rec.Note(app.NetContact{Proto: app.ProtoTCP, Name: "api.tavily.com", Addr: netip.MustParseAddrPort("203.0.113.7:443")}, true, time.Now())
	rec.Close()
	var v NetworkView
	if err := json.Unmarshal([]byte(h.ok("servers", "network", "s", "--json")), &v); err != nil || len(v.Destinations) != 1 || v.Destinations[0].Dest != "api.tavily.com:443" {
		t.Errorf("servers network s --json: %+v, %v", v, err)
	}
	if out := h.ok("servers", "network", "s"); !strings.Contains(out, "api.tavily.com:443 (203.0.113.7) allowed, once") {
		t.Errorf("servers network s:\n%s", out)
	}
	h.ok("servers", "network", "s", "pin")
	if n := setting(); n.Mode != app.NetworkOnly || !slices.Contains(n.Allow, "api.tavily.com:443") {
		t.Errorf("pinned: %+v", n)
	}
	h.ok("servers", "network", "s", "off")
	h.fails(2, []string{"servers", "network", "s", "allow", "x.example:443"}, "is off")
	h.fails(2, []string{"servers", "network", "s", "only", "good.example:443", "bad", "x:y"}, `"bad", "x:y"`)
	h.fails(2, []string{"servers", "network", "s", "sometimes"}, `"sometimes"`)
	h.fails(2, []string{"servers", "network", "s", "off", "x.example:443"}, `"off" takes no destination`)
	h.fails(2, []string{"servers", "network", "s", "only"}, "needs at least one destination")
	h.fails(2, []string{"servers", "network", "nope", "off"}, `no server "nope"`)
	h.fails(2, []string{"servers", "network", "web", "off"}, "remote")
	h.fails(2, []string{"servers", "add", "w2", "--url", "https://x.example/mcp", "--network", "off"}, "--network is for stdio servers")
	h.fails(2, []string{"servers", "add", "x", "--network", "only", "--", "server"}, `"only"`)
	if n := setting(); n.Mode != app.NetworkOff {
		t.Errorf("after bad input: %+v", n)
	}
	// Each decision is in the audit trail, with who made it.
	entries, err := audit.Read(h.dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	var decisions []string
	for _, e := range entries {
		if e.Via == audit.ViaNetwork && audit.IsNetworkDecision(e) {
			decisions = append(decisions, e.Decided+" "+e.Tried+" by "+e.Op)
		}
	}
	if !slices.Contains(decisions, "denied api.example.com:443 by command-line") || !slices.Contains(decisions, "set off; denied api.example.com:443 by command-line") ||
		!slices.Contains(decisions, "set only *.cdn.example:* [::1]:5432 unix:/run/db.sock api.tavily.com:443; denied api.example.com:443 by command-line") {
		t.Errorf("the network decisions in the audit trail: %q", decisions)
	}
	// status --json has each stdio server's network.
	for _, s := range h.status().Servers {
		if s.Name == "s" && (s.Network == nil || s.Network.Setting.Mode != app.NetworkOff || len(s.Network.Destinations) != 1) {
			t.Errorf("status --json: %+v", s.Network)
		}
		if s.Name == "web" && s.Network != nil {
			t.Errorf("a remote server has a network in status: %+v", s.Network)
		}
	}
}

// store is the state as saved.
func (h *harness) store() app.State {
	h.t.Helper()
	s, err := app.OpenStore(h.dir)
	if err != nil {
		h.t.Fatal(err)
	}
	st, err := s.Load()
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}
