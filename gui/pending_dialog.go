package gui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// Scope choices as shown in the consent dialogs.
const (
	scopeAlways    = "Always"
	scopeUntilQuit = "Until I quit Rootkeeper"
)

// pendingDialog asks about every enabled root a connected server has no
// decision for: one checkbox per root (none ticked), a scope, and Allow
// selected / Deny all. Ticked roots are allowed and unticked ones denied,
// both remembered with the chosen scope.
type pendingDialog struct {
	Server string
	Roots  []rootInfo
	// Home shortens paths to ~/… (words.HomeShort).
	Home string
	// OnSubmit gets the ticked and unticked root paths and the scope.
	OnSubmit func(allowed, denied []string, scope app.Scope)
	// OnLater is called when the person puts the question off: nothing
	// is decided, and the banner offers it again.
	OnLater func()

	checks []*keyCheck
	scope  *keyRadio
	allow  *keyButton
	deny   *keyButton
	later  *keyButton
	dlg    *dialog.CustomDialog
	keys   *dialogKeys // Enter allows the ticked, Escape is Later
}

// content builds the dialog's body and buttons.
func (d *pendingDialog) content() fyne.CanvasObject {
	intro := widget.NewLabel(personName(d.Server) + " has connected and may ask which folders it can see. " +
		"It sees none of these until you allow them. Tick the folders it may see:")
	intro.Wrapping = fyne.TextWrapWord
	d.keys = newDialogKeys()
	rows := container.NewVBox()
	d.checks = nil
	for _, info := range d.Roots {
		c := d.keys.check(words.SafeText(info.Root.Name), nil)
		d.checks = append(d.checks, c)
		rows.Add(rootConsentRow(c, info, d.Home))
	}
	d.scope = d.keys.radio([]string{scopeAlways, scopeUntilQuit}, nil)
	d.deny = d.keys.button("Deny all", theme.CancelIcon(), func() { d.submit(false) })
	d.allow = d.keys.button("Allow selected", theme.ConfirmIcon(), func() { d.submit(true) })
	d.allow.Importance = widget.HighImportance
	d.later = d.keys.button("Later", nil, func() {
		if d.dlg != nil {
			d.dlg.Hide()
		}
		if d.OnLater != nil {
			d.OnLater()
		}
	})
	scroll := container.NewVScroll(rows)
	scroll.SetMinSize(fyne.NewSize(560, min(rows.MinSize().Height, 360)))
	remember := container.NewHBox(widget.NewLabel("Remember:"), d.scope)
	note := widget.NewLabel("Unticked folders are denied; you can change any answer later in Roots.")
	note.TextStyle.Italic = true
	note.Wrapping = fyne.TextWrapWord
	return container.NewBorder(intro, container.NewVBox(remember, note), nil, nil, scroll)
}

// Show opens the dialog over parent.
func (d *pendingDialog) Show(parent fyne.Window) {
	body := d.content()
	d.dlg = dialog.NewCustomWithoutButtons(personName(d.Server)+" asks to see folders", body, parent)
	d.dlg.SetButtons([]fyne.CanvasObject{d.deny, d.later, layout.NewSpacer(), d.allow})
	d.dlg.Resize(fyne.NewSize(640, 0))
	d.keys.attach(parent, d.dlg, press(d.allow, d.allow.OnTapped), press(d.later, d.later.OnTapped))
	d.dlg.Show()
}

func (d *pendingDialog) submit(allowTicked bool) {
	paths := make([]string, len(d.Roots))
	ticked := make([]bool, len(d.checks))
	for i, c := range d.checks {
		paths[i], ticked[i] = d.Roots[i].Root.Path, allowTicked && c.Checked
	}
	allowed, denied := app.Ticked(paths, ticked)
	if d.dlg != nil {
		d.dlg.Hide()
	}
	if d.OnSubmit != nil {
		d.OnSubmit(allowed, denied, scopeOf(d.scope.Selected))
	}
}

func scopeOf(choice string) app.Scope {
	if choice == scopeUntilQuit {
		return app.UntilQuit
	}
	return app.Always
}

// rootConsentRow shows one root in a consent dialog: the check (or title;
// nil when the sentence above names it),
// the resolved path (from ~ under home, cut in the middle when long, whole
// on hover), the access check and the warnings.
func rootConsentRow(head fyne.CanvasObject, info rootInfo, home string) fyne.CanvasObject {
	box := container.NewVBox()
	if head != nil {
		box.Add(head)
	}
	path := newPathLabel("")
	path.setPath(info.Root.Path, home)
	box.Add(container.NewPadded(path))
	for _, o := range rootChecks(info, home) {
		box.Add(o)
	}
	return box
}

// rootChecks are the lines under a root's path in a consent dialog: how it
// was picked (a symlink), its access check and its warnings.
func rootChecks(info rootInfo, home string) []fyne.CanvasObject {
	var out []fyne.CanvasObject
	if info.Root.Given != "" && info.Root.Given != info.Root.Path {
		given := widget.NewLabel("picked as " + words.SafeText(words.HomeShort(info.Root.Given, home)))
		given.TextStyle.Italic = true
		given.Truncation = fyne.TextTruncateEllipsis
		out = append(out, given)
	}
	out = append(out, accessLabel(info.Access))
	for _, w := range info.Warnings {
		out = append(out, warningLabel(w))
	}
	return out
}

// accessLabel states the result of an access check.
func accessLabel(h app.Health) fyne.CanvasObject {
	if h.OK() {
		return iconLine(theme.ConfirmIcon(), "Access check passed: the folder exists and can be listed.", widget.SuccessImportance)
	}
	msg := "Access check failed: " + healthText(h)
	if h.Err != "" {
		msg += " (" + h.Err + ")"
	}
	return iconLine(theme.ErrorIcon(), msg, widget.DangerImportance)
}

// warningLabel shows one risk warning.
func warningLabel(text string) fyne.CanvasObject {
	return iconLine(theme.WarningIcon(), text, widget.WarningImportance)
}

// iconLine is an icon beside a wrapped label of the given importance.
func iconLine(icon fyne.Resource, text string, imp widget.Importance) fyne.CanvasObject {
	l := widget.NewLabel(text)
	l.Importance = imp
	l.Wrapping = fyne.TextWrapWord
	var res fyne.Resource = icon
	switch imp {
	case widget.SuccessImportance:
		res = theme.NewSuccessThemedResource(icon)
	case widget.DangerImportance:
		res = theme.NewErrorThemedResource(icon)
	case widget.WarningImportance:
		res = theme.NewWarningThemedResource(icon)
	}
	return container.NewBorder(nil, nil, widget.NewIcon(res), nil, l)
}
