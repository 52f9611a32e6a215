package gui

import (
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/app/words"
)

// The Network line of a stdio server's card: its setting as a select (off,
// ask, only these, open), what that means here (app.NetworkText), the
// destinations it reached (its record), and Pin to these. Every change
// goes through app (State.SetServerNetwork, PinNetwork) off the UI
// goroutine; the MCP side restarts a server whose network narrowed.

// The choices of the network select, as the card shows them, and the
// modes they are.
var networkChoices = []networkChoice{
	{"Off", app.NetworkOff},
	{"Ask", app.NetworkAsk},
	{"Only…", app.NetworkOnly},
	{"Open", app.NetworkOpen},
}

// networkChoice is one choice of the network select.
type networkChoice struct {
	label string
	mode  app.NetworkMode
}

// maxCardDestinations bounds the destinations a card lists; `rootkeeper
// servers network NAME` lists them all.
const maxCardDestinations = 6

// netIsolation is the answer of Options.Isolation, asked once off the UI
// goroutine (it starts a short child process).
type netIsolation struct {
	known, ok bool
	why       string
}

// isolation says whether confined servers get a network of their own here
// (names shown, UDP bounded), and why not. Until the answer is in it says
// they do (no caveat shown for the moment it takes); the cards are drawn
// again once it is. UI goroutine only.
func (u *ui) isolation() (bool, string) {
	if u.netIso == nil {
		u.netIso = &netIsolation{}
		if u.opts.Isolation == nil {
			u.netIso.known, u.netIso.why = true, "this build of Rootkeeper makes no network namespaces"
		} else {
			drawing := true
			ask := u.opts.Isolation
			u.async(func() {
				ok, why := ask()
				u.do(func() {
					u.netIso.known, u.netIso.ok, u.netIso.why = true, ok, why
					if drawing {
						return // answered at once, for the card being drawn
					}
					u.servers.keys = nil // draw the cards again with it
					u.snap = nil
					u.refresh()
				})
			})
			drawing = false
		}
	}
	if !u.netIso.known {
		return true, ""
	}
	return u.netIso.ok, u.netIso.why
}

// networkKey is what a card's Network line shows, for the card's key: the
// setting and the record (its destinations, how each ended, how often).
func networkKey(snap *app.Snapshot, srv app.Server) string {
	var b strings.Builder
	n := srv.NetworkOf()
	b.WriteString(string(n.Mode) + "\x00" + strings.Join(n.Allow, " ") + "\x00" + strings.Join(n.Deny, " "))
	for _, d := range snap.Network[srv.Name].Destinations {
		b.WriteString("\x00" + d.Dest + "\x00" + d.Address)
		if d.Allowed {
			b.WriteString("+")
		}
		b.WriteString(strings.Repeat("|", min(d.Count, 3)))
	}
	return b.String()
}

// networkRow is the card's Network line for stdio server srv (nil for a
// remote one).
func (t *serversTab) networkRow(snap *app.Snapshot, srv app.Server, st app.ServerStatus) fyne.CanvasObject {
	if srv.Type != app.TransportStdio {
		return nil
	}
	_, noLandlock := t.u.landlock()
	confined := srv.Confine && (st.LandlockABI > 0 || noLandlock == nil)
	isolated, why := t.u.isolation()
	n := srv.NetworkOf()
	text := newPathLabel(app.NetworkText(srv, confined, isolated, why))
	pick := widget.NewSelect(nil, nil)
	for _, c := range networkChoices {
		pick.Options = append(pick.Options, c.label)
		if c.mode == n.Mode {
			pick.Selected = c.label
		}
	}
	pick.OnChanged = func(label string) { t.pickNetwork(pick, srv.Name, label) }
	lead := widget.NewLabelWithStyle("Network", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	box := container.NewVBox(container.NewBorder(nil, nil, container.NewHBox(lead, pick), nil, text))
	rec := snap.Network[srv.Name]
	now := t.u.now()
	for i, d := range rec.Destinations {
		if i == maxCardDestinations {
			more := widget.NewLabel(words.SafeText("… and " + plural(len(rec.Destinations)-i, "more destination") + " (rootkeeper servers network " + srv.Name + ")"))
			more.TextStyle.Italic = true
			box.Add(more)
			break
		}
		icon := theme.ConfirmIcon()
		if !d.Allowed {
			icon = theme.CancelIcon()
		}
		box.Add(container.NewBorder(nil, nil, widget.NewIcon(icon), nil, newPathLabel(d.Text(now))))
	}
	if len(rec.Destinations) == 0 && confined && n.Mode != app.NetworkOff {
		none := widget.NewLabel("It has reached nothing yet.")
		none.TextStyle.Italic = true
		box.Add(none)
	}
	if fresh := slices.DeleteFunc(rec.Used(), func(d string) bool { return slices.Contains(n.Allow, d) }); len(fresh) > 0 && n.Mode != app.NetworkOff {
		name := srv.Name
		pin := widget.NewButtonWithIcon("Pin to these", theme.ContentAddIcon(), func() {
			home := t.u.home()
			t.u.update("pin the network of "+name, func(s *app.State) error {
				if err := s.PinNetwork(name, rec, home); err != nil {
					return err
				}
				t.u.auditNetworkSet(s, name)
				return nil
			}, nil)
		})
		note := widget.NewLabel("Only what it reached so far; anything else is then asked at first contact.")
		note.TextStyle.Italic = true
		note.Truncation = fyne.TextTruncateEllipsis
		box.Add(container.NewBorder(nil, nil, pin, nil, note))
	}
	return box
}

// pickNetwork is a choice in a card's network select: off, ask and open
// are stored at once; only these asks for the destinations first
// (prefilled with what it allows and what it reached). A failed write, or
// a dialog cancelled, puts the select back.
func (t *serversTab) pickNetwork(pick *widget.Select, name, label string) {
	snap := t.u.core.Snapshot()
	srv, ok := snap.State.Server(name)
	if !ok {
		return
	}
	n := srv.NetworkOf()
	back := func() {
		changed := pick.OnChanged
		pick.OnChanged = nil
		for _, c := range networkChoices {
			if c.mode == n.Mode {
				pick.SetSelected(c.label)
			}
		}
		pick.OnChanged = changed
	}
	i := slices.IndexFunc(networkChoices, func(c networkChoice) bool { return c.label == label })
	if i < 0 || networkChoices[i].mode == n.Mode && n.Mode != app.NetworkOnly {
		return
	}
	home := t.u.home()
	set := func(next app.NetworkSetting) {
		t.u.update("set the network of "+name, func(s *app.State) error {
			if err := s.SetServerNetwork(name, next, home); err != nil {
				return err
			}
			t.u.auditNetworkSet(s, name)
			return nil
		}, func(err error) {
			if err != nil {
				back()
			}
		})
	}
	next := n
	next.Mode = networkChoices[i].mode
	if next.Mode != app.NetworkOnly {
		set(next)
		return
	}
	list := slices.Clone(n.Allow)
	for _, d := range snap.Network[name].Used() {
		if !slices.Contains(list, d) {
			list = append(list, d)
		}
	}
	entry := widget.NewMultiLineEntry()
	entry.SetText(strings.Join(list, "\n"))
	entry.SetPlaceHolder("api.example.com:443\n*.example.com:443\n203.0.113.7:443\nunix:/run/postgresql/.s.PGSQL.5432")
	entry.SetMinRowsVisible(5)
	help := widget.NewLabel("One destination a line: NAME:PORT, *.NAME:PORT (any name below), IP:PORT, [IPv6]:PORT or unix:/PATH; PORT may be *. Anything else is asked at first contact.")
	help.Wrapping = fyne.TextWrapWord
	d := newConfirm(nil, personName(name)+": only these destinations", container.NewVBox(help, entry), "Save", "Cancel", func(ok bool) {
		if !ok {
			back()
			return
		}
		next.Allow = strings.Fields(entry.Text)
		set(next)
	}, t.u.win)
	d.Resize(fyne.NewSize(560, 320))
	d.Show()
}

// auditNetwork writes the person's decision on server's network, taken in
// the window (by: dialog or window), to the audit log; called off the UI
// goroutine, within an update.
func (u *ui) auditNetwork(server, decided, what string, by app.Source) {
	if u.opts.StateDir == "" {
		return
	}
	if err := audit.NetworkDecision(u.opts.StateDir, server, decided, what, string(by)); err != nil {
		fyne.LogError("writing the audit log", err)
	}
}

// auditNetworkSet audits server's network setting as s now has it.
func (u *ui) auditNetworkSet(s *app.State, server string) {
	if srv, ok := s.Server(server); ok {
		u.auditNetwork(server, audit.NetworkSet, app.NetworkSettingText(srv.NetworkOf()), app.ByWindow)
	}
}
