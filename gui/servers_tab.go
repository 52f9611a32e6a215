package gui

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// serversTab lists each server with its live status, protocol version, the
// roots it sees and its roots mode, with Log, Restart, Edit and Remove; and
// offers Add server… and Paste JSON….
type serversTab struct {
	u       *ui
	keys    []string                     // what each card shows, in order
	gens    [6]uint64                    // the snapshot parts' generations the cards were built from
	cards   map[string]fyne.CanvasObject // the cards built, by key
	content fyne.CanvasObject
	list    *fyne.Container
	add     *widget.Button
	paste   *widget.Button
	// programChanged is the open "A different program" question, for tests.
	programChanged *confirmDialog
	// offer holds the one-time offer to confine the servers an earlier
	// version left unconfined (empty once answered); offered is what it
	// shows.
	offer   *fyne.Container
	offered []string
}

func newServersTab(u *ui) *serversTab {
	t := &serversTab{u: u, list: container.NewVBox()}
	t.add = widget.NewButtonWithIcon("Add server…", theme.ContentAddIcon(), func() {
		(&serverForm{OnSave: t.save(false)}).Show(u.win)
	})
	t.paste = widget.NewButtonWithIcon("Paste JSON…", theme.ContentPasteIcon(), func() {
		(&pasteDialog{OnImport: t.importServers}).Show(u.win)
	})
	top := container.NewBorder(nil, nil, nil, container.NewHBox(t.add, t.paste),
		widget.NewLabel("MCP servers Rootkeeper connects to. Each sees only the folders you allowed it."))
	t.offer = container.NewVBox()
	t.offer.Hide()
	t.content = container.NewBorder(container.NewVBox(top, t.offer), nil, nil, nil, container.NewVScroll(t.list))
	return t
}

// render shows a card per server. A card is built again only when what it
// shows changed (servers report their status many times a second; the
// folders they see change seldom), and nothing is touched when no card
// changed.
func (t *serversTab) render(snap *app.Snapshot, g *app.Grid) {
	// Nothing a card shows changed: the state, the folders' health, the
	// servers' statuses, the bridges, the network and the organisation's
	// policy are as they were.
	gens := [6]uint64{snap.StateGen, snap.HealthGen, snap.ServersGen, snap.BridgesGen, snap.NetworkGen, snap.PolicyGen}
	if t.keys != nil && gens == t.gens && snap.Seq != 0 {
		return
	}
	t.gens = gens
	t.renderOffer(snap)
	facts := gatherCardFacts(snap, g)
	keys := t.cardKeys(snap, facts)
	if t.keys != nil && slices.Equal(keys, t.keys) {
		return
	}
	if len(keys) > 0 && len(keys) == len(t.keys) && len(t.list.Objects) == 2*len(keys)-1 {
		t.swapChangedCards(snap, keys, facts)
		return
	}
	t.rebuildCards(snap, keys, facts)
}

// cardFacts is what the servers' cards show beside the servers and their
// statuses, gathered once a render, by server name.
type cardFacts struct {
	sees    map[string][]string // the names of the roots it sees
	pending map[string]int      // how many of its folders wait for a decision
	extra   map[string][]string // the rest its card shows, as text to compare
}

// gatherCardFacts reads from snap and g what each server's card shows
// beside the server itself.
func gatherCardFacts(snap *app.Snapshot, g *app.Grid) cardFacts {
	f := cardFacts{sees: map[string][]string{}, pending: map[string]int{}, extra: cardExtras(snap)}
	for _, r := range snap.State.Roots {
		for _, name := range g.SeenBy(r.Path) {
			f.sees[name] = append(f.sees[name], r.Name)
		}
	}
	for _, q := range g.Questions() {
		f.pending[q.Server]++
	}
	return f
}

// cardExtras is what else a card shows, as text that changes when it
// does: its bridged sessions (Seen aside: it moves with every report and
// is not shown), the requests and needs for it, its slots' states, what
// holds it, its confinement failure, its network and what the
// organisation's policy sets for it.
func cardExtras(snap *app.Snapshot) map[string][]string {
	extra := map[string][]string{}
	for _, id := range sortedKeysInt(snap.Bridges) {
		b := snap.Bridges[id]
		b.Seen = time.Time{}
		extra[b.Server] = append(extra[b.Server], fmt.Sprintf("%#v", b))
	}
	for _, r := range snap.State.Requests {
		extra[r.Server] = append(extra[r.Server], r.From+"\x00"+r.Path)
	}
	for _, n := range snap.State.Needs {
		extra[n.Server] = append(extra[n.Server], "need\x00"+n.Path)
	}
	for _, srv := range snap.State.Servers {
		for _, sl := range srv.Slots {
			extra[srv.Name] = append(extra[srv.Name], string(app.SlotStateOf(snap, srv.Name, sl)))
		}
		if h := app.HoldOf(snap, srv.Name); h != nil {
			extra[srv.Name] = append(extra[srv.Name], h.Text(""))
		}
		if f, ok := snap.State.ConfineFailureOf(srv.Name); ok {
			extra[srv.Name] = append(extra[srv.Name], fmt.Sprintf("%#v", f))
		}
		extra[srv.Name] = append(extra[srv.Name], networkKey(snap, srv))
		extra[srv.Name] = append(extra[srv.Name], app.PolicyFor(srv)...)
		aside := app.SetAsideByPolicy(&snap.State, srv.Name)
		for _, root := range slices.Sorted(maps.Keys(aside)) {
			extra[srv.Name] = append(extra[srv.Name], "aside\x00"+root+"\x00"+aside[root])
		}
	}
	return extra
}

// cardKeys is, for each server in order, everything its card shows as one
// string: a card whose key is unchanged need not be built again.
func (t *serversTab) cardKeys(snap *app.Snapshot, f cardFacts) []string {
	keys := make([]string, len(snap.State.Servers))
	for i, srv := range snap.State.Servers {
		srv.Network = nil // a pointer: what it says is in extra (networkKey)
		keys[i] = fmt.Sprintf("%#v\x00%#v\x00%q\x00%d\x00%t\x00%q", srv, snap.Servers[srv.Name], f.sees[srv.Name],
			f.pending[srv.Name], t.u.opts.Resources != nil, f.extra[srv.Name])
	}
	return keys
}

// swapChangedCards builds again, in place, the cards whose key changed,
// when the list holds the same servers as before.
func (t *serversTab) swapChangedCards(snap *app.Snapshot, keys []string, f cardFacts) {
	for i, k := range keys {
		if k != t.keys[i] {
			srv := snap.State.Servers[i]
			t.list.Objects[2*i] = t.card(snap, srv, f.sees[srv.Name], f.pending[srv.Name])
		}
	}
	t.keys = keys
	t.cards = nil
	t.list.Refresh()
}

// rebuildCards fills the list anew, when servers came, went or moved: a
// card whose key is unchanged is reused, the others are built.
func (t *serversTab) rebuildCards(snap *app.Snapshot, keys []string, f cardFacts) {
	t.keys = keys
	old := t.cards
	t.cards = map[string]fyne.CanvasObject{}
	fillList(t.list, "No servers yet.\nAdd one with Add server…, or copy an \"mcpServers\" block from another app's config and use Paste JSON….",
		len(snap.State.Servers), func(i int) fyne.CanvasObject {
			srv := snap.State.Servers[i]
			c, ok := old[keys[i]]
			if !ok {
				c = t.card(snap, srv, f.sees[srv.Name], f.pending[srv.Name])
			}
			t.cards[keys[i]] = c
			return c
		})
}

// card is a server's card: its name, state and buttons, what it is, the
// folders it may see, its confinement and network, then a line for each
// thing to know about it.
func (t *serversTab) card(snap *app.Snapshot, srv app.Server, sees []string, pending int) fyne.CanvasObject {
	st := snap.Servers[srv.Name]
	box := container.NewVBox(t.cardHead(srv, st), factsLine(srv, st), seesLine(srv, sees, pending), t.confineRow(srv, st))
	if row := t.networkRow(snap, srv, st); row != nil {
		box.Add(row)
	}
	for _, line := range t.cardLines(snap, srv, st) {
		box.Add(line)
	}
	return box
}

// cardHead is a card's first line: the server's name, its state, and the
// buttons that act on it (Resources… only while it is connected, and only
// in a build that can browse them).
func (t *serversTab) cardHead(srv app.Server, st app.ServerStatus) fyne.CanvasObject {
	name := srv.Name
	title := widget.NewLabelWithStyle(name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	logBtn := widget.NewButtonWithIcon("Log", theme.DocumentIcon(), func() { t.showLog(name) })
	restart := widget.NewButtonWithIcon("Restart", theme.ViewRefreshIcon(), func() { t.restart(name) })
	if t.u.opts.Servers == nil {
		logBtn.Disable()
		restart.Disable()
	}
	edit := widget.NewButtonWithIcon("Edit…", theme.DocumentCreateIcon(), func() {
		(&serverForm{Server: srv, Editing: true, OnSave: t.save(true)}).Show(t.u.win)
	})
	remove := widget.NewButtonWithIcon("Remove", theme.DeleteIcon(), func() { t.confirmRemove(name) })
	buttons := container.NewHBox(logBtn, restart, edit, remove)
	if b := t.u.opts.Resources; b != nil && st.State == app.ServerConnected {
		buttons.Objects = append([]fyne.CanvasObject{widget.NewButtonWithIcon("Resources…", theme.FolderOpenIcon(), func() {
			newResourcesDialog(t.u, name, b).Show(t.u.win)
		})}, buttons.Objects...)
	}
	return container.NewBorder(nil, nil, title, buttons, stateLabel(st))
}

// stateLabel says whether a server runs: green when connected, red when
// failed, in italics otherwise.
func stateLabel(st app.ServerStatus) *widget.Label {
	stateText := string(st.State)
	if stateText == "" {
		stateText = "not running"
	}
	state := widget.NewLabel(stateText)
	switch st.State {
	case app.ServerConnected:
		state.Importance = widget.SuccessImportance
	case app.ServerFailed:
		state.Importance = widget.DangerImportance
	default:
		state.TextStyle.Italic = true
	}
	state.Truncation = fyne.TextTruncateEllipsis
	return state
}

// factsLine says what a server is: the protocol and the name and version
// it gave (once connected), its roots mode and how it is reached.
func factsLine(srv app.Server, st app.ServerStatus) fyne.CanvasObject {
	var facts []string
	if st.ProtocolVersion != "" {
		facts = append(facts, "protocol "+st.ProtocolVersion)
	}
	if st.ServerName != "" {
		facts = append(facts, words.SafeText(strings.TrimSpace(st.ServerName+" "+st.ServerVersion)))
	}
	facts = append(facts, "roots mode: "+string(srv.Mode()), transportText(srv))
	return newPathLabel(strings.Join(facts, " · "))
}

// seesLine says which folders a server may see (sees, the roots' names),
// and how many more wait for the person's decision.
func seesLine(srv app.Server, sees []string, pending int) fyne.CanvasObject {
	var seesText string
	switch {
	case srv.Mode() == app.RootsOff:
		seesText = "May see no folders: roots are off for this server."
	case len(sees) == 0:
		seesText = "May see no folders."
	default:
		seesText = "May see " + words.SafeText(listNames(sees, 12))
	}
	if pending > 0 {
		seesText += fmt.Sprintf(" %s waiting for your decision.", plural(pending, "folder"))
	}
	seesLabel := widget.NewLabel(seesText)
	seesLabel.Wrapping = fyne.TextWrapWord
	return seesLabel
}

// cardLines are the lines at the foot of a card, each a thing to know
// about the server: the folders its configuration names and where each
// stands, what keeps it from starting, what it keeps on its command line,
// the hosts bridged to it, a log it cannot write, its error, and what is
// its own (ownRows: its data, the folders it needs, a failed confined start).
func (t *serversTab) cardLines(snap *app.Snapshot, srv app.Server, st app.ServerStatus) []fyne.CanvasObject {
	name := srv.Name
	var lines []fyne.CanvasObject
	home := t.u.home()
	for _, sl := range srv.Slots {
		lines = append(lines, newPathLabel(words.SafeText(fmt.Sprintf("Configured with %s (%s): %s", words.HomeShort(sl.Path, home), sl.Where(), slotStateText[app.SlotStateOf(snap, name, sl)]))))
	}
	if h := app.HoldOf(snap, name); h != nil {
		lines = append(lines, iconLine(theme.WarningIcon(), "Not started: "+h.Text(home), widget.WarningImportance))
	}
	for _, k := range srv.KeepArgs {
		lines = append(lines, iconLine(theme.WarningIcon(), words.SafeText(fmt.Sprintf("Kept on its command line: %s — if it is a folder, the server sees it without asking.", k)),
			widget.WarningImportance))
	}
	for _, line := range bridgeLines(snap, name, t.u.home()) {
		lines = append(lines, newPathLabel(line))
	}
	if st.LogProblem != "" {
		lines = append(lines, iconLine(theme.WarningIcon(), words.SafeText("Its log is not being written: "+st.LogProblem+" (tried again while it runs)"), widget.WarningImportance))
	}
	if st.Error != "" && st.State != app.ServerHeld {
		lines = append(lines, iconLine(theme.ErrorIcon(), words.SafeText(st.Error), widget.DangerImportance))
	}
	lines = append(lines, policyLines(snap, srv, home)...)
	return append(lines, t.ownRows(snap, srv)...)
}

// policyLines say what the organisation's policy sets for the server, in
// the words of `status` (app.PolicyFor), and which folders the person
// allowed it that the policy never grants (app.SetAsideByPolicy): they are
// not the person's to change here, so the card says who set them.
func policyLines(snap *app.Snapshot, srv app.Server, home string) []fyne.CanvasObject {
	var lines []fyne.CanvasObject
	if set := app.PolicyFor(srv); len(set) > 0 {
		lines = append(lines, iconLine(theme.InfoIcon(), words.SafeText("Set by your organisation: "+strings.Join(set, "; ")), widget.MediumImportance))
	}
	aside := app.SetAsideByPolicy(&snap.State, srv.Name)
	for _, root := range slices.Sorted(maps.Keys(aside)) {
		lines = append(lines, iconLine(theme.WarningIcon(), words.SafeText(fmt.Sprintf("Allowed by you, never granted by your organisation (%s): %s", aside[root], words.HomeShort(root, home))), widget.WarningImportance))
	}
	return lines
}

// slotStateText says where a slot stands, on a server's card.
var slotStateText = map[app.SlotState]string{
	app.SlotAllowed:   "allowed",
	app.SlotUndecided: "waiting for your decision",
	app.SlotDenied:    "denied: the server is not started",
	app.SlotOff:       "switched off: the server is not started",
}

// confineRow says whether the server is confined, in the words of
// `status` (app.ConfinementText), and for a stdio server offers the Confine
// switch. Turning it on is refused where Landlock is missing (the switch is
// disabled and the line says why); turning it off always works, so that a
// server left unstartable by it can be started again. The change goes
// through the core off the UI goroutine; the MCP side restarts a server
// whose configuration changed.
func (t *serversTab) confineRow(srv app.Server, st app.ServerStatus) fyne.CanvasObject {
	text := app.ConfinementText(srv, &st, t.u.landlock, t.u.landlockKernel)
	if srv.Type != app.TransportStdio {
		return newPathLabel(text)
	}
	_, unavailable := t.u.landlock()
	check := widget.NewCheck("Confine", nil)
	check.SetChecked(srv.Confine)
	if !srv.Confine && unavailable != nil {
		text += " (" + unavailable.Error() + ")"
		check.Disable()
	}
	if srv.Confine && app.ConfinementRequired() {
		// Turning it off is refused anyway: the switch does not offer it.
		text += " — confinement " + app.ByPolicy
		check.Disable()
	}
	check.OnChanged = func(on bool) { t.setConfine(check, srv.Name, on) }
	return container.NewBorder(nil, nil, check, nil, newPathLabel(text))
}

// setConfine writes the server's Confine through the core; a failed write
// puts the switch back.
func (t *serversTab) setConfine(check *widget.Check, name string, on bool) {
	what := "confine " + name
	if !on {
		what = "stop confining " + name
	}
	t.u.update(what, func(s *app.State) error {
		// The same program: its decisions stay. The decision is audited
		// like a grant.
		if err := s.SetConfinement(name, on); err != nil {
			return err
		}
		t.auditConfinement(name, on)
		return nil
	}, func(err error) {
		if err != nil {
			changed := check.OnChanged
			check.OnChanged = nil
			check.SetChecked(!on)
			check.OnChanged = changed
		}
	})
}

// transportText says how the server is reached.
func transportText(srv app.Server) string { return app.Program(srv) }

// save returns the form's OnSave: add or replace the server, through
// app's PutServer as `servers add` does: its configuration is kept whole and
// the folders it names become slots the window asks about. An edit keeps
// what the form does not show (confinement, host roots, kept arguments),
// and an edit that changes what the server runs makes it a new program for
// consent: the person sees the old and the new program and chooses whether
// its decisions are dropped (the default) or kept.
func (t *serversTab) save(replace bool) func(app.Server) {
	return func(srv app.Server) {
		if !replace {
			t.importServers([]app.Server{srv})
			return
		}
		old, ok := t.u.core.Snapshot().State.Server(srv.Name)
		home := t.u.home()
		commit := func(keep bool) {
			t.u.update("save server "+srv.Name, func(s *app.State) error {
				_, err := s.PutServer(srv, app.PutOptions{Replace: true, Given: app.SetRootsMode | app.SetSampling, KeepDecisions: keep, Home: home, StateDir: t.u.opts.StateDir})
				return err
			}, nil)
		}
		if !ok || app.SameProgram(old, srv) {
			commit(false)
			return
		}
		msg := widget.NewLabel(fmt.Sprintf("%s now runs something else.\n\nWas: %s\nNow: %s\n\n"+
			"A different program does not inherit the folders the old one was allowed: "+
			"unless you keep your choices, it sees nothing until you decide again.",
			words.SafeText(srv.Name), app.Program(old), app.Program(srv)))
		msg.Wrapping = fyne.TextWrapWord
		d := newConfirm(nil, "A different program", msg, "Keep my choices", "Start fresh", commit, t.u.win)
		d.Resize(fyne.NewSize(620, 300))
		t.programChanged = d
		d.Show()
	}
}

// importServers adds servers (from the form or pasted JSON) through app's
// PutServer. The folders their configurations name are slots, which the
// window then asks about ("fs is configured with ~/Desktop") and each card
// lists until they are answered.
func (t *serversTab) importServers(servers []app.Server) {
	what := "add the pasted servers"
	if len(servers) == 1 {
		what = "save server " + servers[0].Name
	}
	home := t.u.home()
	t.u.update(what, func(s *app.State) error {
		for _, srv := range servers {
			if _, err := s.PutServer(srv, app.PutOptions{Home: home, StateDir: t.u.opts.StateDir}); err != nil {
				return err
			}
		}
		return nil
	}, nil)
}

func (t *serversTab) confirmRemove(name string) {
	confirmText("Remove "+personName(name)+"?",
		"Rootkeeper disconnects it and forgets it and every decision about it.", "Remove", "Cancel",
		func(ok bool) {
			if ok {
				t.u.update("remove server "+name, func(s *app.State) error { return s.RemoveServer(name) }, nil)
			}
		}, t.u.win).Show()
}

func (t *serversTab) restart(name string) {
	ctl := t.u.opts.Servers
	if ctl == nil {
		return
	}
	t.u.async(func() { ctl.Restart(name) })
}

// showLog shows the server's recent stderr.
func (t *serversTab) showLog(name string) {
	ctl := t.u.opts.Servers
	if ctl == nil {
		return
	}
	t.u.async(func() {
		text := ctl.Log(name)
		t.u.do(func() {
			if strings.TrimSpace(text) == "" {
				text = "(nothing written to stderr yet)"
			}
			// A server's stderr is its own text: escapes and bidi overrides are
			// neutralised before they are drawn.
			grid := widget.NewTextGridFromString(words.SafeLines(text))
			scroll := container.NewScroll(grid)
			scroll.SetMinSize(fyne.NewSize(760, 420))
			scroll.ScrollToBottom()
			newInfo(nil, personName(name)+": stderr", scroll, "Close", t.u.win).Show()
		})
	})
}

func sortedKeysInt[V any](m map[int]V) []int { return slices.Sorted(maps.Keys(m)) }
