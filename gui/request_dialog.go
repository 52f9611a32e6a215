package gui

import (
	"path/filepath"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
)

// requestDialog asks about one request: a host (through the bridge) or a
// server's command line asked that a server see a folder. Allow makes the
// folder a root the server sees, Deny remembers the no, Later leaves the
// request open (it stays listed in status) and does not ask again until
// the app starts again.
type requestDialog struct {
	Request app.Request
	Info    rootInfo
	// OnSubmit gets the answer: allow or deny, with the scope.
	OnSubmit func(allow bool, scope app.Scope)
	// OnLater is called when the person puts it off.
	OnLater func()
	// OnOnce, for an attempt of a confined server (app.FromReach), gets
	// "allow once": the waiting call gets the file, nothing is granted.
	OnOnce func()

	intro *widget.Label
	scope *widget.RadioGroup
	allow *widget.Button
	deny  *widget.Button
	later *widget.Button
	once  *widget.Button // nil but for an attempt of a confined server
	dlg   *dialog.CustomDialog
}

func (d *requestDialog) content() fyne.CanvasObject {
	after := ". It does not see it until you allow it."
	if d.Request.From == app.FromCommandLine {
		// A slot: the server runs only with the folder.
		after = ". It is not started until you allow it."
	}
	if d.Request.From == app.FromReach {
		after = " Its call waits for your answer; Allow once lets this call through and grants nothing."
		d.once = widget.NewButton("Allow once", func() {
			d.hide()
			if d.OnOnce != nil {
				d.OnOnce()
			}
		})
	}
	d.intro = widget.NewLabel(app.RequestText(d.Request) + after)
	d.intro.Wrapping = fyne.TextWrapWord
	d.scope = widget.NewRadioGroup([]string{scopeAlways, scopeUntilQuit}, nil)
	d.scope.Horizontal = true
	d.scope.Required = true
	d.scope.SetSelected(scopeAlways)
	d.deny = widget.NewButtonWithIcon("Deny", theme.CancelIcon(), func() { d.submit(false) })
	d.allow = widget.NewButtonWithIcon("Allow", theme.ConfirmIcon(), func() { d.submit(true) })
	d.allow.Importance = widget.HighImportance
	d.later = widget.NewButton("Later", func() {
		d.hide()
		if d.OnLater != nil {
			d.OnLater()
		}
	})
	remember := container.NewHBox(widget.NewLabel("Remember:"), d.scope)
	return container.NewVBox(d.intro, rootConsentRow(widget.NewLabel(d.Info.Root.Name), d.Info), remember)
}

// Show opens the dialog over parent.
func (d *requestDialog) Show(parent fyne.Window) {
	body := d.content()
	d.dlg = dialog.NewCustomWithoutButtons(d.Request.Server+" is asked to see a folder", body, parent)
	buttons := []fyne.CanvasObject{d.deny, d.later, layout.NewSpacer()}
	if d.once != nil {
		buttons = append(buttons, d.once)
	}
	d.dlg.SetButtons(append(buttons, d.allow))
	d.dlg.Resize(fyne.NewSize(640, 0))
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

// askRequest opens the dialog for the first open request not put off,
// and reports whether it did.
func (u *ui) askRequest() bool {
	for _, r := range u.snap.State.Requests {
		key := "request:" + r.Server + "\x00" + r.Path
		// Put off with Later, unless asked again since (a host started
		// the server, which waits for the answer).
		if put, ok := u.later[key]; (ok && !r.Last.After(put)) || u.busy[key] {
			continue
		}
		u.consent = key
		home := u.home()
		u.async(func() {
			root := app.Root{Path: r.Path, Name: filepath.Base(r.Path), Source: app.SourceRequested, Enabled: true}
			info := u.inspect([]app.Root{root}, home)[0]
			u.do(func() {
				if u.consent != key {
					return
				}
				d := &requestDialog{Request: r, Info: info}
				d.OnLater = func() {
					if u.later == nil {
						u.later = map[string]time.Time{}
					}
					u.later[key] = r.Last
					u.consent = ""
					u.refresh()
				}
				d.OnOnce = func() {
					u.consent = ""
					u.busy[key] = true
					u.update("allow "+r.Server+" once", func(s *app.State) error {
						return s.GrantOnce(r.Server, r.Path, app.ByDialog, time.Now().UTC())
					}, func(error) { delete(u.busy, key) })
				}
				d.OnSubmit = func(allow bool, scope app.Scope) {
					u.consent = ""
					u.busy[key] = true
					verdict := app.Deny
					if allow {
						verdict = app.Allow
					}
					u.update("record the decision for "+r.Server, func(s *app.State) error {
						return s.DecideRequest(app.Decision{Server: r.Server, Root: r.Path, Verdict: verdict, Scope: scope, By: app.ByDialog})
					}, func(error) { delete(u.busy, key) })
				}
				u.raise()
				u.notify("Rootkeeper", app.RequestText(r)+".")
				d.Show(u.win)
				u.openDialog = d
			})
		})
		return true
	}
	return false
}
