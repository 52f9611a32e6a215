package gui

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// The request dialog for a network destination a confined server tried
// to reach (app.FromNetwork): the connects that wait on it, in words, and
// the answers Deny (remembered), Later, Allow always (the destination
// joins the server's network) and Allow once (exactly the connects
// shown). Enter is the safe default the app says (app.ReachQuestion:
// Deny, since a connect sends whatever the server holds). It is the
// folder request's dialog (requestDialog), following its request while it
// is open in the same way.

func (d *requestDialog) network() bool { return d.Request.From == app.FromNetwork }

// networkContent is the dialog's body for a network request.
func (d *requestDialog) networkContent(now time.Time) fyne.CanvasObject {
	d.allow.SetText("Allow always")
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
	lead := widget.NewLabelWithStyle("Allow always lets it reach", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	dest := newPathLabel(words.SafeText(d.Request.Path))
	what := widget.NewLabel("Deny is remembered: it is not asked again. Its network setting and every destination it reached are on its card (Servers).")
	what.Wrapping = fyne.TextWrapWord
	d.setRequest(d.Request, now)
	return container.NewVBox(d.intro, d.callsBox, d.goneRow, widget.NewSeparator(),
		container.NewBorder(nil, nil, lead, nil, dest), d.note, what)
}
