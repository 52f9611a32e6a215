package cli

import (
	"errors"
	"fmt"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/app/words"
)

// NetworkIsolation reports whether confined servers get a network of
// their own here (names known, UDP bounded), and why not. main sets it
// from package mcp/confine; nil means they do not.
var NetworkIsolation func() (bool, string)

// isolation is NetworkIsolation's answer.
func isolation() (bool, string) {
	if NetworkIsolation == nil {
		return false, "this build of Rootkeeper makes no network namespaces"
	}
	return NetworkIsolation()
}

// NetworkView is a server's network in a Status: its setting, what it
// says, and the record of what it reached.
type NetworkView struct {
	// Setting is the setting as stored (mode, allowed and denied
	// destinations); open for a server stored before there was one.
	Setting app.NetworkSetting `json:"setting"`
	// Text says it as `status` does, with where it cannot be enforced.
	Text string `json:"text"`
	// Bounded says the setting holds: the server runs confined.
	Bounded bool `json:"bounded"`
	// Names says that destinations are shown by the names looked up (the
	// server has a network of its own here).
	Names bool `json:"names"`
	// Destinations are what it reached or tried, the most recent first.
	Destinations []app.Reached `json:"destinations"`
}

// networkView is srv's NetworkView in snap (its record read from
// stateDir outside a running app); confined says whether it runs
// confined.
func networkView(snap *app.Snapshot, srv app.Server, confined bool, stateDir string) *NetworkView {
	if srv.Type != app.TransportStdio {
		return nil
	}
	isolated, why := isolation()
	v := &NetworkView{Setting: srv.NetworkOf(), Text: app.NetworkText(srv, confined, isolated, why), Bounded: confined, Names: isolated && confined,
		Destinations: app.NetworkRecordOf(snap, srv.Name, stateDir).Destinations}
	if v.Destinations == nil {
		v.Destinations = []app.Reached{}
	}
	return v
}

// runsConfined says whether srv runs confined: the ABI it was started
// under, or, not running, whether it would be confined here.
func runsConfined(srv app.Server, live *app.ServerStatus) bool {
	if srv.Type != app.TransportStdio || !srv.Confine {
		return false
	}
	if live != nil && live.LandlockABI > 0 {
		return true
	}
	_, err := landlockABI()
	return err == nil
}

// maxDestinationsShown bounds the destinations `status` prints a server;
// `servers network NAME` prints them all.
const maxDestinationsShown = 8

// printNetwork prints a server's network for a person: the setting, then
// the destinations (at most max; 0: all).
func (c *command) printNetwork(name string, v *NetworkView, max int) {
	if v == nil {
		return
	}
	c.printf("  %s\n", v.Text)
	now := time.Now()
	for i, d := range v.Destinations {
		if max > 0 && i == max {
			c.printf("    … and %d more (`rootkeeper servers network %s`)\n", len(v.Destinations)-max, words.ShellQuote(name))
			break
		}
		c.printf("    %s\n", d.Text(now))
	}
	if len(app.NetworkRecord{Destinations: v.Destinations}.Used()) > 0 && v.Setting.Mode != app.NetworkOnly && v.Setting.Mode != app.NetworkOff {
		c.printf("    only these from now on: rootkeeper servers network %s pin\n", words.ShellQuote(name))
	}
}

// printNetworkRequest prints a network request: what the server tried,
// the connects waiting on it with their short ids and the command that
// lets exactly one through once, and the answers.
func (c *command) printNetworkRequest(server string, r app.Request, now time.Time) {
	c.printf("  requested %s\n", app.RequestText(r))
	q := words.ShellQuote
	decide := fmt.Sprintf("allow it always: `rootkeeper servers network %s allow %s`; deny it: `rootkeeper servers network %s deny %s`", q(server), q(r.Path), q(server), q(r.Path))
	ask := app.ReachQuestionOf(r, now, nil)
	if !ask.Waiting {
		c.printf("            %s; %s\n", ask.Gone, decide)
		return
	}
	c.printf("            %d connect(s) wait %s more:\n", len(ask.Calls), r.Until.Sub(now).Round(time.Second))
	for _, call := range ask.Calls {
		c.printf("%s\n", words.SafeText(fmt.Sprintf("              [%s] %s (once: `rootkeeper grant %s --once --call %s`)", call.Short, call.Text(""), q(server), q(call.Short))))
	}
	c.printf("            %s\n", decide)
}

// serversNetwork is `servers network NAME [off|ask|open|only DEST…|pin|
// allow DEST…|deny DEST…] [--json]`: with no setting it shows the
// server's network and what it reached; otherwise it sets it, through
// PutServer. A bad mode or destination is named, exit 2, nothing saved.
func (c *command) serversNetwork(args []string) error {
	f := newFlags("servers network")
	asJSON := f.Bool("json")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("%q needs a server: servers network NAME [off|ask|open|only DEST...|pin|allow DEST...|deny DEST...]", "servers network")
	}
	name, verb, dests := pos[0], "", []string(nil)
	if len(pos) > 1 {
		verb, dests = pos[1], pos[2:]
	}
	if verb == "" {
		return c.showNetwork(name, *asJSON)
	}
	if *asJSON {
		return usagef("--json is for showing a server's network, not for %q", verb)
	}
	was, _ := c.store.Load()
	before, _ := was.Server(name)
	now, err := c.networkChange(name, verb, dests)
	if err != nil {
		return err
	}
	srv, _ := now.Server(name)
	c.auditNetwork(name, verb, dests, srv)
	isolated, why := isolation()
	c.printf("%s: %s\n", name, app.NetworkText(srv, runsConfined(srv, nil), isolated, why))
	if app.NetworkNeedsRestart(before, srv) {
		c.printf("%s starts again under it if it is running: it may have been let reach more\n", name)
	}
	return nil
}

// networkChange applies `servers network NAME VERB DEST…` to the state.
func (c *command) networkChange(name, verb string, dests []string) (app.State, error) {
	switch verb {
	case "off", "ask", "open":
		if len(dests) > 0 {
			return app.State{}, usagef("%q takes no destination (got %q); use only DEST..., allow DEST or deny DEST", verb, dests[0])
		}
	case "only", "allow", "deny":
		if len(dests) == 0 {
			return app.State{}, usagef("%q needs at least one destination (NAME:PORT, *.NAME:PORT, IP:PORT, [IPv6]:PORT or unix:/PATH)", verb)
		}
		if _, err := app.ParseDestinations(dests); err != nil {
			return app.State{}, err
		}
	case "pin":
		if len(dests) > 0 {
			return app.State{}, usagef("%q takes no destination (got %q): it allows what the server reached so far", verb, dests[0])
		}
	default:
		return app.State{}, usagef("invalid network setting %q for %q (want off, ask, open, only DEST..., pin, allow DEST... or deny DEST...)", verb, name)
	}
	var rec app.NetworkRecord
	if verb == "pin" {
		rec = app.NetworkRecordOf(&app.Snapshot{}, name, c.store.Dir())
	}
	return c.update(func(s *app.State) error {
		srv, ok := s.Server(name)
		if !ok {
			return &app.InputError{Msg: fmt.Sprintf("no server %q", name)}
		}
		n := srv.NetworkOf()
		switch verb {
		case "off", "ask", "open":
			n.Mode = app.NetworkMode(verb)
		case "only":
			n.Mode, n.Allow = app.NetworkOnly, dests
		case "pin":
			return s.PinNetwork(name, rec, c.env.Home)
		case "allow":
			for _, d := range dests {
				if err := s.NetworkAllow(name, d, c.env.Home); err != nil {
					return err
				}
			}
			return nil
		case "deny":
			for _, d := range dests {
				if err := s.NetworkDeny(name, d, c.env.Home); err != nil {
					return err
				}
			}
			return nil
		}
		return s.SetServerNetwork(name, n, c.env.Home)
	})
}

// showNetwork prints server name's network and every destination it
// reached (--json: the NetworkView).
func (c *command) showNetwork(name string, asJSON bool) error {
	st, err := c.store.Load()
	if err != nil {
		return err
	}
	srv, ok := st.Server(name)
	if !ok {
		return &app.InputError{Msg: fmt.Sprintf("no server %q", name)}
	}
	v := networkView(&app.Snapshot{State: st}, srv, runsConfined(srv, nil), c.store.Dir())
	if v == nil {
		return &app.InputError{Msg: fmt.Sprintf("server %q is remote (%s): Rootkeeper reaches it at its URL; only a stdio server's network is bounded", name, srv.Type)}
	}
	if asJSON {
		return c.printJSON(v)
	}
	c.printf("%s\n", words.SafeText(name))
	c.printNetwork(name, v, 0)
	if len(v.Destinations) == 0 {
		c.printf("    nothing reached yet\n")
	}
	return nil
}

// addNetwork is the network `servers add --network off|ask|open` gives
// (nil when the flag was not typed: PutServer's default applies). Only a
// stdio server (stdio: a command was given) has one; `only` is set with
// `servers network NAME only DEST…`, once the server exists.
func addNetwork(given bool, value string, stdio bool) (*app.NetworkSetting, error) {
	if !given {
		return nil, nil
	}
	if !stdio {
		return nil, usagef("--network is for stdio servers (a remote one is reached at its URL)")
	}
	m, err := app.ParseNetworkMode(value)
	if err != nil || m == app.NetworkOnly {
		return nil, usagef("invalid --network %q (want off, ask or open; then `servers network NAME only DEST...` for only)", value)
	}
	return &app.NetworkSetting{Mode: m}, nil
}

// printAddedNetwork says the network a stdio server was put with.
func (c *command) printAddedNetwork(srv app.Server) {
	if srv.Type != app.TransportStdio {
		return
	}
	isolated, why := isolation()
	c.printf("%s: %s (change it: rootkeeper servers network %s off|ask|open|only DEST...)\n", srv.Name,
		app.NetworkText(srv, runsConfined(srv, nil), isolated, why), words.ShellQuote(srv.Name))
}

// auditNetwork writes the person's decision on server name's network (now
// srv) to the audit log: each destination allowed or denied, or the
// setting as it now is.
func (c *command) auditNetwork(name, verb string, dests []string, srv app.Server) {
	var err error
	switch verb {
	case "allow", "deny":
		decided := audit.NetworkAllowed
		if verb == "deny" {
			decided = audit.NetworkDenied
		}
		for _, d := range dests {
			if d, perr := app.ParseDestination(d); perr == nil {
				err = errors.Join(err, audit.NetworkDecision(c.store.Dir(), name, decided, d, string(app.ByCommandLine)))
			}
		}
	default:
		err = audit.NetworkDecision(c.store.Dir(), name, audit.NetworkSet, app.NetworkSettingText(srv.NetworkOf()), string(app.ByCommandLine))
	}
	if err != nil {
		fmt.Fprintf(c.env.Stderr, "rootkeeper: warning: cannot write the audit log: %s\n", words.SafeText(err.Error()))
	}
}
