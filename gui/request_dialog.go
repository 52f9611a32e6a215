package gui

import (
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/app/hosts"
	"rootkeeper/app/words"
)

// requestDialog asks about one request: a host (through the bridge) or a
// server's command line asked that a server see a folder, or a confined
// server tried to reach past its folders. Allow (Allow folder) makes the
// folder a root the server sees, Deny remembers the no, Later leaves the
// request open (the window's line about what waits, the tray and the
// Access tab keep it in sight) and does not ask again until it is asked
// anew.
//
// For a confined server's attempt it lists every call that waits on it,
// in words, and which of them Allow once cannot let through; it follows
// the request while it is open (setRequest): a call that joins shows
// before it can be answered, and when the wait runs out it says so and
// Allow once is off. What is on screen is what Allow once answers
// (app.ReachQuestion).
type requestDialog struct {
	Request app.Request
	Info    rootInfo
	// Home shortens paths to ~/… (words.HomeShort).
	Home string
	// OnSubmit gets the answer: allow (the folder) or deny, with the
	// scope.
	OnSubmit func(allow bool, scope app.Scope)
	// OnLater is called when the person puts it off.
	OnLater func()
	// OnOnce, for an attempt of a confined server (app.FromReach), gets
	// "allow once" with the IDs of the calls on screen: each gets what it
	// asked for, nothing is granted.
	OnOnce func(ids []string)

	// question is what is on screen of a reach request (zero otherwise).
	question app.ReachQuestion
	intro    *widget.Label
	calls    *fyne.Container // the calls, one line each (reach only)
	callsBox *container.Scroll
	gone     *widget.Label // why nothing waits any more (reach only)
	goneRow  fyne.CanvasObject
	note     *widget.Label // what Allow once does (reach only)
	scope    *keyRadio
	allow    *keyButton // Allow, or Allow folder for a reach request
	deny     *keyButton
	later    *keyButton
	once     *keyButton // nil but for an attempt of a confined server
	dlg      *dialog.CustomDialog
	keys     *dialogKeys // Enter is the safe default, Escape is Later
	// timed is the end of the wait a timer looks again at (followRequest).
	timed time.Time
}

func (d *requestDialog) reach() bool { return d.Request.From == app.FromReach }

// asks reports whether the request is an attempt of a confined server
// (a folder it reached for, or a network destination): calls wait on it.
func (d *requestDialog) asks() bool { return d.reach() || d.network() }

func (d *requestDialog) content(now time.Time) fyne.CanvasObject {
	d.keys = newDialogKeys()
	d.scope = d.keys.radio([]string{scopeAlways, scopeUntilQuit}, nil)
	d.deny = d.keys.button("Deny", theme.CancelIcon(), func() { d.submit(false) })
	d.allow = d.keys.button("Allow", theme.ConfirmIcon(), func() { d.submit(true) })
	d.later = d.keys.button("Later", nil, func() {
		d.hide()
		if d.OnLater != nil {
			d.OnLater()
		}
	})
	d.intro = widget.NewLabel("")
	d.intro.Wrapping = fyne.TextWrapWord
	remember := container.NewHBox(widget.NewLabel("Remember:"), d.scope)
	if d.network() {
		return d.networkContent(now)
	}
	if !d.reach() {
		after := ". It does not see it until you allow it."
		if d.Request.From == app.FromCommandLine {
			// A slot: the server runs only with the folder.
			after = ". It is not started until you allow it."
		}
		d.intro.SetText(app.RequestTextFor(d.Request, d.Home, hosts.DisplayName) + after)
		d.allow.Importance = widget.HighImportance
		// The sentence names the folder; the row under it shows where it
		// is, its access check and its warnings.
		return container.NewVBox(d.intro, rootConsentRow(nil, d.Info, d.Home), remember)
	}
	d.allow.SetText("Allow folder")
	d.once = d.keys.button("Allow once", nil, func() {
		ids := d.question.OnceIDs() // what is on screen, no more
		d.hide()
		if d.OnOnce != nil {
			d.OnOnce(ids)
		}
	})
	d.calls = container.NewVBox()
	d.callsBox = container.NewVScroll(d.calls)
	d.gone = widget.NewLabel("")
	d.gone.Wrapping = fyne.TextWrapWord
	d.gone.Importance = widget.WarningImportance
	d.goneRow = container.NewBorder(nil, nil, widget.NewIcon(theme.NewWarningThemedResource(theme.InfoIcon())), nil, d.gone)
	d.note = widget.NewLabel("")
	d.note.Wrapping = fyne.TextWrapWord
	d.note.TextStyle.Italic = true
	// The folder, once: what Allow folder lets the server into.
	lead := widget.NewLabelWithStyle("Allow folder lets it into", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	path := newPathLabel("")
	path.setPath(d.Info.Root.Path, d.Home)
	folder := container.NewVBox(container.NewBorder(nil, nil, lead, nil, path))
	for _, o := range rootChecks(d.Info, d.Home) {
		folder.Add(o)
	}
	d.setRequest(d.Request, now)
	return container.NewVBox(d.intro, d.callsBox, d.goneRow, widget.NewSeparator(), folder, d.note, remember)
}

// setRequest shows r (the same server and folder, as it is now) in the
// open dialog of a reach request: the calls waiting at now, or why none
// waits any more, and the safe default button.
func (d *requestDialog) setRequest(r app.Request, now time.Time) {
	d.Request = r
	if !d.asks() || d.calls == nil {
		return
	}
	q := app.ReachQuestionOf(r, now, hosts.DisplayName)
	d.question = q
	if q.Waiting {
		d.intro.SetText("It waits for your answer before it can:")
	} else {
		d.intro.SetText("It tried to:")
	}
	d.calls.Objects = nil
	for _, c := range q.Calls {
		d.calls.Add(callLine(c, d.Home))
	}
	d.calls.Refresh()
	d.callsBox.SetMinSize(fyne.NewSize(560, min(d.calls.MinSize().Height, 200)))
	if q.Gone != "" {
		d.gone.SetText(q.Gone + ".")
		d.goneRow.Show()
	} else {
		d.goneRow.Hide()
	}
	switch {
	case q.Once:
		some := "exactly the calls above"
		for _, c := range q.Calls {
			if c.NotOnce != "" {
				some = "the calls above it can do"
			}
		}
		d.note.SetText("Allow once lets " + some + " through, each with only its own access, and grants nothing: the next attempt asks again.")
		if d.network() {
			d.note.SetText("Allow once lets exactly the connects above through and allows nothing more: the next connect asks again.")
		}
		d.note.Show()
		d.once.Enable()
	case !app.OnceAllowed():
		d.note.SetText("Allow once is not offered: only lasting decisions (" + app.ByPolicy + ").")
		d.note.Show()
		d.once.Disable()
	default:
		d.note.Hide()
		d.once.Disable()
	}
	d.once.Importance, d.deny.Importance, d.allow.Importance = widget.MediumImportance, widget.MediumImportance, widget.MediumImportance
	if q.Default == app.ReachOnce {
		d.once.Importance = widget.HighImportance
	} else {
		d.deny.Importance = widget.HighImportance
	}
	d.once.Refresh()
	d.deny.Refresh()
	d.allow.Refresh()
	if d.dlg != nil {
		d.dlg.Resize(fyne.NewSize(640, 0))
	}
}

// callLine is one call of a reach request: what it does to which path,
// and, when allow once cannot let it through, why and what can.
func callLine(c app.ReachCall, home string) fyne.CanvasObject {
	what := widget.NewLabel("• " + upperFirst(c.Text(home)))
	what.Wrapping = fyne.TextWrapWord
	if c.NotOnce == "" {
		return what
	}
	why := widget.NewLabel("Allow once cannot let this through (" + words.SafeText(c.NotOnce) + "); Allow folder can.")
	why.Wrapping = fyne.TextWrapWord
	why.TextStyle.Italic = true
	why.Importance = widget.WarningImportance
	return container.NewVBox(what, container.NewPadded(why))
}

// upperFirst is s with its first letter a capital.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Show opens the dialog over parent.
func (d *requestDialog) Show(parent fyne.Window, now time.Time) {
	body := d.content(now)
	title := personName(d.Request.Server) + " is asked to see a folder"
	if d.reach() {
		title = personName(d.Request.Server) + " tried to reach past its folders"
	}
	if d.network() {
		title = personName(d.Request.Server) + " tried to reach the network"
	}
	d.dlg = dialog.NewCustomWithoutButtons(title, body, parent)
	buttons := []fyne.CanvasObject{d.deny, d.later, layout.NewSpacer(), d.allow}
	if d.once != nil {
		buttons = append(buttons, d.once)
	}
	d.dlg.SetButtons(buttons)
	d.dlg.Resize(fyne.NewSize(640, 0))
	d.keys.attach(parent, d.dlg, d.pressDefault, press(d.later, d.later.OnTapped))
	d.dlg.Show()
}

// pressDefault is Enter: the safe default as it is on screen now (Allow
// once for reads, Deny for anything else; Allow for a host's request).
func (d *requestDialog) pressDefault() {
	switch {
	case !d.asks():
		press(d.allow, d.allow.OnTapped)()
	case d.question.Default == app.ReachOnce:
		press(d.once, d.once.OnTapped)()
	default:
		press(d.deny, d.deny.OnTapped)()
	}
}

func (d *requestDialog) hide() {
	if d.dlg != nil {
		d.dlg.Hide()
	}
}

func (d *requestDialog) submit(allow bool) {
	d.hide()
	if d.OnSubmit != nil {
		d.OnSubmit(allow, scopeOf(d.scope.Selected))
	}
}

// requestKey names the consent dialog of request r (ui.consent).
func requestKey(r app.Request) string { return "request:" + r.Server + "\x00" + r.Path }

// askRequest opens the dialog for request r (the consent queue says which
// comes next: app.ConsentQueue.Next).
func (u *ui) askRequest(r app.Request) {
	key := requestKey(r)
	u.consent = key
	home := u.home()
	u.async(func() {
		var info rootInfo
		if r.From != app.FromNetwork {
			// A folder: where it is, its access check and its warnings.
			info = u.inspect([]app.Root{app.RequestRoot(r)}, home)[0]
		}
		u.do(func() {
			if u.consent != key {
				return
			}
			// The request as it is now: calls may have joined while the
			// folder was looked at.
			if now, ok := u.core.Snapshot().State.Request(r.Server, r.Path); ok {
				r = now
			}
			d := &requestDialog{Request: r, Info: info, Home: home}
			d.OnLater = func() {
				u.queue.PutOffRequest(d.Request)
				u.laterChanged()
				u.consent = ""
				u.openDialog = nil
				u.refresh()
			}
			d.OnOnce = func(ids []string) {
				r := d.Request
				u.consent = ""
				u.openDialog = nil
				u.queue.AnsweringRequest(r)
				u.update("allow "+r.Server+" once", func(s *app.State) error {
					_, err := s.GrantOnce(r.Server, r.Path, ids, app.ByDialog, u.now().UTC())
					return err
				}, func(error) { u.queue.AnsweredRequest(r) })
			}
			d.OnSubmit = func(allow bool, scope app.Scope) {
				r := d.Request
				u.consent = ""
				u.openDialog = nil
				u.queue.AnsweringRequest(r)
				u.update("record the decision for "+r.Server, func(s *app.State) error {
					// app decides what the answer makes: a folder a
					// confined server reached for is its alone, a
					// destination joins its network or is refused for good.
					if err := s.AnswerRequest(r, allow, scope, app.ByDialog, u.now().UTC(), app.NeedPlace{Home: home, StateDir: u.opts.StateDir}); err != nil {
						return err
					}
					if r.From == app.FromNetwork {
						decided := audit.NetworkDenied
						if allow {
							decided = audit.NetworkAllowed
						}
						u.auditNetwork(r.Server, decided, r.Path, app.ByDialog)
					}
					return nil
				}, func(error) { u.queue.AnsweredRequest(r) })
			}
			u.raise()
			text := app.RequestTextFor(r, home, hosts.DisplayName)
			if !strings.HasSuffix(text, "?") {
				text += "."
			}
			u.notify("Rootkeeper", text)
			d.Show(u.win, u.now())
			u.openDialog = d
			u.followRequest()
			u.onScreen("request")
		})
	})
}

// followRequest keeps the open request dialog to its request: a call that
// joined shows, a wait that ran out says so (a timer looks again then),
// and a request answered elsewhere (the command line, another window)
// closes it. UI goroutine only.
func (u *ui) followRequest() {
	d, ok := u.openDialog.(*requestDialog)
	if !ok || u.consent != requestKey(d.Request) {
		return
	}
	r, open := u.core.Snapshot().State.Request(d.Request.Server, d.Request.Path)
	if !open {
		d.hide()
		u.consent = ""
		u.openDialog = nil
		u.askNext()
		return
	}
	now := u.now()
	d.setRequest(r, now)
	if d.question.Waiting && !d.timed.Equal(r.Until) {
		// Nothing changes in the state when the wait runs out: look
		// again then.
		d.timed = r.Until
		u.after(r.Until.Sub(now)+50*time.Millisecond, func() {
			if u.openDialog == d {
				u.followRequest()
			}
		})
	}
}

// answerRequest asks the request of server for folder path now (the tray's
// line, the window's line about what waits, the Access tab), put off or
// not; behind a dialog already open, next.
func (u *ui) answerRequest(server, path string) {
	u.queue.AskFirst(server, path)
	u.laterChanged() // no longer put off
	u.raise()
	u.askNext()
}
