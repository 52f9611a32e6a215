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

// shareDialog asks before a folder is shared: it shows the resolved path,
// the access check and the warnings, and one checkbox per server, none
// ticked. Share enables the folder (adding it when IsNew) with the ticked
// servers allowed and the others denied; Cancel changes nothing.
type shareDialog struct {
	Root    rootInfo
	Servers []string // the servers to ask about
	IsNew   bool     // the folder is not a root yet
	// Home shortens paths to ~/… (words.HomeShort).
	Home string
	// OnSubmit gets the ticked and unticked server names and the scope.
	OnSubmit func(allowed, denied []string, scope app.Scope)
	OnCancel func()

	checks []*keyCheck
	scope  *keyRadio
	share  *keyButton
	cancel *keyButton
	dlg    *dialog.CustomDialog
	keys   *dialogKeys // Enter shares, Escape cancels
}

func (d *shareDialog) content() fyne.CanvasObject {
	title := widget.NewLabelWithStyle(words.SafeText(d.Root.Root.Name), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	info := rootConsentRow(title, d.Root, d.Home)
	d.keys = newDialogKeys()
	servers := container.NewVBox()
	d.checks = nil
	if len(d.Servers) == 0 {
		hint := widget.NewLabel("No servers are set up yet. The folder will be added, and each server you add later will ask before it sees it.")
		hint.Wrapping = fyne.TextWrapWord
		servers.Add(hint)
	} else {
		servers.Add(widget.NewLabel("Which servers may see it?"))
		for _, name := range d.Servers {
			c := d.keys.check(personName(name), nil)
			d.checks = append(d.checks, c)
			servers.Add(c)
		}
	}
	d.scope = d.keys.radio([]string{scopeAlways, scopeUntilQuit}, nil)
	if len(d.Servers) > 0 {
		servers.Add(container.NewHBox(widget.NewLabel("Remember:"), d.scope))
		note := widget.NewLabel("Servers left unticked will not see it; you can change this later in Roots.")
		note.TextStyle.Italic = true
		note.Wrapping = fyne.TextWrapWord
		servers.Add(note)
	}
	label := "Share"
	if d.IsNew && len(d.Servers) == 0 {
		label = "Add folder"
	}
	d.share = d.keys.button(label, theme.ConfirmIcon(), d.submit)
	d.share.Importance = widget.HighImportance
	d.cancel = d.keys.button("Cancel", theme.CancelIcon(), d.dismiss)
	return container.NewVBox(info, widget.NewSeparator(), servers)
}

// Show opens the dialog over parent.
func (d *shareDialog) Show(parent fyne.Window) {
	body := d.content()
	d.dlg = dialog.NewCustomWithoutButtons("Share a folder", body, parent)
	d.dlg.SetButtons([]fyne.CanvasObject{d.cancel, layout.NewSpacer(), d.share})
	d.dlg.Resize(fyne.NewSize(640, 0))
	d.keys.attach(parent, d.dlg, press(d.share, d.share.OnTapped), d.dismiss)
	d.dlg.Show()
}

func (d *shareDialog) submit() {
	ticked := make([]bool, len(d.checks))
	for i, c := range d.checks {
		ticked[i] = c.Checked
	}
	allowed, denied := app.Ticked(d.Servers, ticked)
	if d.dlg != nil {
		d.dlg.Hide()
	}
	if d.OnSubmit != nil {
		d.OnSubmit(allowed, denied, scopeOf(d.scope.Selected))
	}
}

func (d *shareDialog) dismiss() {
	if d.dlg != nil {
		d.dlg.Hide()
	}
	if d.OnCancel != nil {
		d.OnCancel()
	}
}
