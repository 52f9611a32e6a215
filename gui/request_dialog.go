package gui

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/hosts"
)

// requestDialog asks about one request: a host (through the bridge) or a
// server's command line asked that a server see a folder. Allow makes the
// folder a root the server sees, Deny remembers the no, Later leaves the
// request open (it stays listed in status) and does not ask again until
// the app starts again.
type requestDialog struct {
	Request app.Request
	Info    rootInfo
	// Home shortens paths to ~/… (app.HomeShort).
	Home string
	// OnSubmit gets the answer: allow or deny, with the scope.
	OnSubmit func(allow bool, scope app.Scope)
	// OnLater is called when the person puts it off.
	OnLater func()
	// OnOnce, for an attempt of a confined server (app.FromReach), gets
	// "allow once": the waiting call gets the file, nothing is granted.
	OnOnce func()

	intro *widget.Label
	scope *keyRadio
	allow *keyButton
	deny  *keyButton
	later *keyButton
	once  *keyButton // nil but for an attempt of a confined server
	dlg   *dialog.CustomDialog
	keys  *dialogKeys // Enter allows, Escape is Later
}

func (d *requestDialog) content() fyne.CanvasObject {
	after := ". It does not see it until you allow it."
	if d.Request.From == app.FromCommandLine {
		// A slot: the server runs only with the folder.
		after = ". It is not started until you allow it."
	}
	d.keys = newDialogKeys()
	if d.Request.From == app.FromReach {
		after = " Its call waits for your answer; Allow once lets this call through and grants nothing."
		d.once = d.keys.button("Allow once", nil, func() {
			d.hide()
			if d.OnOnce != nil {
				d.OnOnce()
			}
		})
	}
	d.intro = widget.NewLabel(app.RequestTextFor(d.Request, d.Home, hosts.DisplayName) + after)
	d.intro.Wrapping = fyne.TextWrapWord
	d.scope = d.keys.radio([]string{scopeAlways, scopeUntilQuit}, nil)
	d.deny = d.keys.button("Deny", theme.CancelIcon(), func() { d.submit(false) })
	d.allow = d.keys.button("Allow", theme.ConfirmIcon(), func() { d.submit(true) })
	d.allow.Importance = widget.HighImportance
	d.later = d.keys.button("Later", nil, func() {
		d.hide()
		if d.OnLater != nil {
			d.OnLater()
		}
	})
	remember := container.NewHBox(widget.NewLabel("Remember:"), d.scope)
	return container.NewVBox(d.intro, rootConsentRow(widget.NewLabel(app.SafeText(d.Info.Root.Name)), d.Info, d.Home), remember)
}

// Show opens the dialog over parent.
func (d *requestDialog) Show(parent fyne.Window) {
	body := d.content()
	d.dlg = dialog.NewCustomWithoutButtons(personName(d.Request.Server)+" is asked to see a folder", body, parent)
	buttons := []fyne.CanvasObject{d.deny, d.later, layout.NewSpacer()}
	if d.once != nil {
		buttons = append(buttons, d.once)
	}
	d.dlg.SetButtons(append(buttons, d.allow))
	d.dlg.Resize(fyne.NewSize(640, 0))
	d.keys.attach(parent, d.dlg, press(d.allow, d.allow.OnTapped), press(d.later, d.later.OnTapped))
	d.dlg.Show()
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

// askRequest opens the dialog for request r (the consent queue says which
// comes next: app.ConsentQueue.Next).
func (u *ui) askRequest(r app.Request) {
	key := "request:" + r.Server + "\x00" + r.Path
	u.consent = key
	home := u.home()
	u.async(func() {
		info := u.inspect([]app.Root{app.RequestRoot(r)}, home)[0]
		u.do(func() {
			if u.consent != key {
				return
			}
			d := &requestDialog{Request: r, Info: info, Home: home}
			d.OnLater = func() {
				u.queue.PutOffRequest(r)
				u.consent = ""
				u.refresh()
			}
			d.OnOnce = func() {
				u.consent = ""
				u.queue.AnsweringRequest(r)
				shown := []string{}
				for _, c := range r.Calls {
					shown = append(shown, c.ID)
				}
				u.update("allow "+r.Server+" once", func(s *app.State) error {
					_, err := s.GrantOnce(r.Server, r.Path, shown, app.ByDialog, time.Now().UTC())
					return err
				}, func(error) { u.queue.AnsweredRequest(r) })
			}
			d.OnSubmit = func(allow bool, scope app.Scope) {
				u.consent = ""
				u.queue.AnsweringRequest(r)
				u.update("record the decision for "+r.Server, func(s *app.State) error {
					return s.DecideRequest(app.RequestDecision(r, allow, scope, app.ByDialog))
				}, func(error) { u.queue.AnsweredRequest(r) })
			}
			u.raise()
			u.notify("Rootkeeper", app.RequestTextFor(r, home, hosts.DisplayName)+".")
			d.Show(u.win)
			u.openDialog = d
			u.onScreen("request")
		})
	})
}
