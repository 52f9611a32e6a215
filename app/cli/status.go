package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/control"
	"rootkeeper/app/words"
)

// Status is what `status --json` prints, and what a running app answers on
// its control socket for the "status" op. Everything in it is derived from
// one snapshot through app.Visible.
type Status struct {
	// Running says whether this came from a running app (live connection
	// state and health) or was computed by the command line alone.
	Running bool `json:"running"`
	Paused  bool `json:"paused"`
	// Policy says what the organisation's policy sets, or why it cannot
	// be used; empty when there is none.
	Policy  string            `json:"policy,omitempty"`
	Notices map[string]string `json:"notices,omitempty"`
	Servers []ServerView      `json:"servers"`
	// Bridges are the running bridge sessions (from a running app only).
	Bridges []app.BridgeSession `json:"bridges"`
}

// ServerView is one server in a Status.
type ServerView struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	RootsMode string `json:"rootsMode"`
	// Visible are the roots the server may see now, by app.Visible.
	Visible []RootRef `json:"visible"`
	// Pending are enabled roots with no decision for this server.
	Pending []RootRef `json:"pending"`
	// Requests are folders asked for this server (by a host, on its
	// command line, or reached by it) and not decided yet; none is
	// visible. The calls waiting on one have their short ids set.
	Requests []app.Request `json:"requests"`
	// Live is the connection status from the running app (nil otherwise).
	Live *app.ServerStatus `json:"live,omitempty"`
	// Confinement says whether the server runs confined: "confined
	// (Landlock ABI N)", NotConfined, or why it cannot be confined.
	Confinement string `json:"confinement"`
	// Slots are the folders and files its configuration names, each with
	// where it stands (allowed, undecided, denied, off).
	Slots []SlotView `json:"slots"`
	// Held says why it is not started (app.HoldOf), with whole paths; empty
	// when it may start.
	Held string `json:"held,omitempty"`
	// Failure says what it reached for when it stopped confined, and the
	// way out (app.ConfineFailure).
	Failure *app.ConfineFailure `json:"confineFailure,omitempty"`
	// Data is its data folder (confined servers): where its own settings,
	// logs and data go; Own are the paths of its own in the home folder
	// that the table of known servers gives it.
	Data string   `json:"data,omitempty"`
	Own  []string `json:"own,omitempty"`
	// Needs are the folders it needs to run, allowed to it alone when it
	// reached for them or its confined start failed for want of them
	// (app.Need): in its ruleset, never among its roots.
	Needs []app.Need `json:"needs"`
	// Refusals are the folders it reached for that the person refused it
	// (its alone: no root was made of them); it is not asked about them
	// again.
	Refusals []app.Refusal `json:"refusals"`
	// KeptData are data folders of programs it ran before, kept aside
	// until you give one to it or remove it (app.KeptData).
	KeptData []KeptDataView `json:"keptData"`
	// Network is a stdio server's network: its setting and what it
	// reached (network.go); nil for a remote server.
	Network *NetworkView `json:"network,omitempty"`
	// Policy is what the organisation's policy sets for it, one line each
	// (app.PolicyFor); SetAside are roots it was allowed that the policy
	// never grants, each with its rule in Policy.
	Policy   []string  `json:"policy,omitempty"`
	SetAside []RootRef `json:"setAside,omitempty"`
}

// SlotView is one slot of a server in a Status.
type SlotView struct {
	app.Slot
	State app.SlotState `json:"state"`
}

// RootRef names a root in a Status.
type RootRef struct {
	Name string `json:"name"`
	Path string `json:"path"`
	URI  string `json:"uri"`
	// Policy names the organisation's rule that holds it, where one does.
	Policy string `json:"policy,omitempty"`
}

// BuildStatus derives a Status from a snapshot. The running app calls it to
// answer "status" on its control socket.
func BuildStatus(snap *app.Snapshot, running bool, stateDir string) Status {
	st := Status{Running: running, Paused: snap.State.Paused, Policy: app.PolicyText(), Notices: snap.Notices, Servers: []ServerView{}, Bridges: []app.BridgeSession{}}
	for _, id := range slices.Sorted(maps.Keys(snap.Bridges)) {
		st.Bridges = append(st.Bridges, snap.Bridges[id])
	}
	if bad := app.ConflictingDecisions(&snap.State); len(bad) > 0 {
		st.Notices = maps.Clone(st.Notices)
		if st.Notices == nil {
			st.Notices = map[string]string{}
		}
		st.Notices["decisions"] = strings.Join(bad, "; ")
	}
	for _, srv := range snap.State.Servers {
		v := ServerView{Name: srv.Name, Type: srv.Type, RootsMode: string(srv.Mode()), Visible: refs(app.Visible(snap, srv.Name)),
			Pending: refs(app.Pending(snap, srv.Name)), Requests: app.ShortIDs(snap.State.RequestsFor(srv.Name), time.Now().UTC())}
		if v.Requests == nil {
			v.Requests = []app.Request{}
		}
		if live, ok := snap.Servers[srv.Name]; ok {
			v.Live = &live
		}
		v.Confinement = confinement(srv, v.Live)
		v.Policy = app.PolicyFor(srv)
		for path, rule := range app.SetAsideByPolicy(&snap.State, srv.Name) {
			r, _ := snap.State.Root(path)
			v.SetAside = append(v.SetAside, RootRef{Name: r.Name, Path: path, URI: app.URIFromPath(path), Policy: "never granted (" + rule + ")"})
		}
		slices.SortFunc(v.SetAside, func(a, b RootRef) int { return strings.Compare(a.Path, b.Path) })
		v.Network = networkView(snap, srv, runsConfined(srv, v.Live), stateDir)
		v.Slots = []SlotView{}
		for _, sl := range srv.Slots {
			v.Slots = append(v.Slots, SlotView{Slot: sl, State: app.SlotStateOf(snap, srv.Name, sl)})
		}
		if h := app.HoldOf(snap, srv.Name); h != nil {
			v.Held = h.Text("")
		}
		if f, ok := snap.State.ConfineFailureOf(srv.Name); ok {
			v.Failure = &f
		}
		v.Needs = snap.State.NeedsOf(srv.Name)
		if v.Needs == nil {
			v.Needs = []app.Need{}
		}
		v.Refusals = snap.State.RefusalsOf(srv.Name)
		if v.Refusals == nil {
			v.Refusals = []app.Refusal{}
		}
		v.KeptData = []KeptDataView{}
		if stateDir != "" {
			v.KeptData = keptViews(srv, stateDir)
		}
		if srv.Confine && srv.Type == app.TransportStdio && stateDir != "" {
			v.Data, _ = app.ServerDataFolder(stateDir, srv.Name)
			if k, ok := app.KnownServerOf(srv); ok {
				for _, o := range k.Own {
					v.Own = append(v.Own, "~/"+strings.TrimSuffix(o, "/"))
				}
			}
		}
		st.Servers = append(st.Servers, v)
	}
	return st
}

func refs(roots []app.Root) []RootRef {
	out := make([]RootRef, 0, len(roots))
	for _, r := range roots {
		out = append(out, RootRef{Name: r.Name, Path: r.Path, URI: r.URI()})
	}
	return out
}

// checkTimeout bounds the command line's access check of one root: a dead
// network mount makes the root unreadable, not the command hang.
const checkTimeout = 5 * time.Second

// snapshot builds a snapshot outside a running app: the saved state plus a
// fresh access check of every root, so that the command line applies the
// same rule the app does.
func (c *command) snapshot() (*app.Snapshot, error) {
	st, err := c.store.Load()
	if err != nil {
		return nil, err
	}
	snap := &app.Snapshot{State: st, Health: map[string]app.Health{}}
	for _, r := range st.Roots {
		snap.Health[r.Path] = app.CheckAccessWithin(r.Path, r.Device, checkTimeout)
	}
	return snap, nil
}

func (c *command) status(args []string) error {
	f := newFlags("status")
	asJSON := f.Bool("json")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if err := exactly("status", pos); err != nil {
		return err
	}
	var st Status
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	err = control.Call(ctx, c.store.Dir(), "status", nil, &st)
	if errors.Is(err, control.ErrNotRunning) {
		snap, err := c.snapshot()
		if err != nil {
			return err
		}
		st = BuildStatus(snap, false, c.store.Dir())
	} else if err != nil {
		return fmt.Errorf("asking the running app: %w", err)
	}
	if *asJSON {
		return c.printJSON(st)
	}
	c.printStatus(st)
	return nil
}

// printStatus prints st for a person. Everything a server or a folder name
// brings in is passed through words.SafeText (a server's self-reported name
// or its stderr could otherwise forge lines or drive the terminal), and
// every command hint is shell-quoted (a folder called $(...) must not
// become a command when pasted).
func (c *command) printStatus(st Status) {
	now := time.Now()
	switch {
	case st.Paused:
		c.printf("Sharing is PAUSED: no server sees any root.\n")
	case st.Running:
		c.printf("Sharing is on (app running).\n")
	default:
		c.printf("Sharing is on (app not running: connection state unknown).\n")
	}
	if st.Policy != "" {
		c.printf("Policy: %s\n", words.SafeText(st.Policy))
	}
	for _, topic := range slices.Sorted(maps.Keys(st.Notices)) {
		c.printf("Note: %s\n", words.SafeText(st.Notices[topic]))
	}
	if len(st.Servers) == 0 {
		c.printf("No servers configured: add one with `rootkeeper servers add` or `rootkeeper import`.\n")
	}
	for _, s := range st.Servers {
		c.printServer(s, st.Bridges, now)
	}
}

// printServer prints one server of the status: its headline, then
// indented what holds it back, what it is configured with, how it is
// confined, what it needs and was refused, why its confined start failed,
// what it sees and asks for, and the bridge sessions (of bridges) that
// reach it.
func (c *command) printServer(s ServerView, bridges []app.BridgeSession, now time.Time) {
	c.printf("%s\n", words.SafeText(serverHeadline(s)))
	if s.Live != nil && s.Live.LogProblem != "" {
		c.printf("  its log is not being written: %s\n", words.SafeText(s.Live.LogProblem))
	}
	if s.Held != "" {
		c.printf("  held, not started: %s\n", s.Held)
	}
	for _, sl := range s.Slots {
		c.printf("  configured with %s (%s): %s\n", sl.Path, sl.Where(), string(sl.State))
	}
	c.printf("  %s\n", words.SafeText(s.Confinement))
	for _, line := range s.Policy {
		c.printf("  %s: %s\n", app.ByPolicy, words.SafeText(line))
	}
	for _, r := range s.SetAside {
		c.printf("  allowed %s, but %s: %s\n", r.Path, app.ByPolicy, words.SafeText(r.Policy))
	}
	if s.Data != "" {
		c.printf("  its own data: %s\n", words.SafeText(strings.Join(append([]string{s.Data}, s.Own...), ", ")))
	}
	c.printNeedsAndKept(s)
	c.printNetwork(s.Name, s.Network, maxDestinationsShown)
	c.printFailure(s)
	c.printSight(s, now)
	for _, b := range bridges {
		if b.Server != s.Name {
			continue
		}
		c.printf("  %s\n", app.BridgeText(b))
	}
}

// serverHeadline is the first line of a server in the status: its name,
// transport and roots mode, and when the app runs it, its state, what it
// says it is, and its error.
func serverHeadline(s ServerView) string {
	line := fmt.Sprintf("%s (%s, roots: %s)", s.Name, s.Type, s.RootsMode)
	if s.Live == nil {
		return line
	}
	line += " — " + string(s.Live.State)
	if s.Live.ProtocolVersion != "" {
		line += ", protocol " + s.Live.ProtocolVersion
	}
	if s.Live.ServerName != "" {
		line += ", " + strings.TrimSpace(s.Live.ServerName+" "+s.Live.ServerVersion)
	}
	if s.Live.Error != "" {
		line += ": " + s.Live.Error
	}
	return line
}

// printFailure prints why server s's confined start failed, if it did,
// and the ways out: allowing the folder it reached for, when one, or
// running it unconfined.
func (c *command) printFailure(s ServerView) {
	f := s.Failure
	if f == nil {
		return
	}
	c.printf("  %s\n", f.Text(c.env.Home))
	way := f.WayOut()
	if f.Folder != "" {
		c.printf("    allow %s for %s (it alone): %s\n", words.HomeShort(f.Folder, c.env.Home), s.Name, way[0])
		way = way[1:]
	}
	if f.Destination != "" {
		c.printf("    allow: %s\n", way[0])
		way = way[1:]
	}
	c.printf("    run it unconfined: %s\n", way[0])
}

// printSight prints the roots server s sees, those undecided for it, and
// the folders it asks for, each with the command that grants it.
func (c *command) printSight(s ServerView, now time.Time) {
	if len(s.Visible) == 0 {
		c.printf("  sees nothing\n")
	}
	for i, r := range s.Visible {
		label := "  sees     "
		if i > 0 {
			label = "           "
		}
		c.printf("%s%s\n", label, words.SafeText(r.Path))
	}
	for _, r := range s.Pending {
		c.printf("  undecided %s (grant with `rootkeeper grant %s %s`)\n", words.SafeText(r.Path), words.ShellQuote(s.Name), words.ShellQuote(r.Path))
	}
	for _, r := range s.Requests {
		if r.From == app.FromReach {
			c.printReach(s.Name, r, now)
			continue
		}
		if r.From == app.FromNetwork {
			c.printNetworkRequest(s.Name, r, now)
			continue
		}
		c.printf("  requested %s (grant with `rootkeeper grant %s %s`)\n", app.RequestText(r), words.ShellQuote(s.Name), words.ShellQuote(r.Path))
	}
}

// printNeedsAndKept prints the folders server s needs to run and the data
// folders of its earlier programs kept aside, each with the commands that
// answer it.
func (c *command) printNeedsAndKept(s ServerView) {
	for _, r := range s.Refusals {
		c.printf("  refused: %s (never asked again; undo: `rootkeeper revoke %s %s`)\n", words.SafeText(r.Path), words.ShellQuote(s.Name), words.ShellQuote(r.Path))
	}
	for _, n := range s.Needs {
		c.printf("  needs to run: %s (%s, its alone; take it away: `rootkeeper revoke %s %s`)\n",
			words.HomeShort(n.Path, c.env.Home), n.Access, words.ShellQuote(s.Name), words.ShellQuote(n.Path))
	}
	for _, k := range s.KeptData {
		use, remove := keptCommands(s.Name, k, len(s.KeptData) > 1)
		c.printf("  kept aside: %s — the data of %s, kept aside %s (give it to %s: `%s`; remove it: `%s`)\n",
			k.Path, (app.KeptData{Program: k.Program}).ProgramText(), k.At.Local().Format("2006-01-02 15:04"), s.Name, use, remove)
	}
}

// printReach prints a confined server's reach request: what it tried, the
// calls that wait on it now, each with its short id and the command that
// lets exactly it through once, or why nothing waits, and the commands
// that answer the folder.
func (c *command) printReach(server string, r app.Request, now time.Time) {
	c.printf("  requested %s\n", app.RequestText(r))
	q := func(s string) string { return words.ShellQuote(s) }
	decide := fmt.Sprintf("allow the folder: `rootkeeper grant %s %s`; deny it: `rootkeeper deny %s %s`", q(server), q(r.Path), q(server), q(r.Path))
	ask := app.ReachQuestionOf(r, now, nil)
	if !ask.Waiting {
		c.printf("            %s; %s\n", ask.Gone, decide)
		return
	}
	waiting := ask.Calls
	c.printf("            %d call(s) wait %s more:\n", len(waiting), r.Until.Sub(now).Round(time.Second))
	for _, call := range waiting {
		line := "              [" + call.Short + "] " + call.Text("")
		switch {
		case call.NotOnce != "":
			line += " (allow once cannot: " + call.NotOnce + ")"
		default:
			line += fmt.Sprintf(" (once: `rootkeeper grant %s --once --call %s`)", q(server), q(call.Short))
		}
		c.printf("%s\n", words.SafeText(line))
	}
	if slices.ContainsFunc(waiting, func(call app.ReachCall) bool { return app.OpOnlyReads(call.Op) && call.NotOnce == "" }) {
		c.printf("            every read and listing at once (no change): `rootkeeper grant %s %s --once`\n", q(server), q(r.Path))
	}
	c.printf("            %s\n", decide)
}
