package gui

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// samplingPrompt is a sampling dialog waiting in, or shown from, the
// sampling queue: one is on screen at a time, in the order they came.
type samplingPrompt interface {
	Show(parent fyne.Window)
	Hide()
	// Headline is the notification's text.
	Headline() string
}

// samplingRequestDialog shows a server's sampling request before anything
// reaches the model: the system prompt and the messages, read-only, except
// the last user message, which the person may edit; the token cap; Approve
// or Reject.
type samplingRequestDialog struct {
	Req       app.SamplingRequest
	OnApprove func(app.SamplingRequest)
	OnReject  func()

	edit    *keyEntry // the last user message; nil when there is none
	approve *keyButton
	reject  *keyButton
	answerOnce
}

func (d *samplingRequestDialog) Headline() string {
	return personName(d.Req.Server) + " asks to use the language model. Review the request."
}

// Bounds of what a sampling dialog shows: a server's prompt can be 16 MiB,
// and laying out that much text would freeze the window.
const (
	// shownChars is how much of one message (or the system prompt) is
	// shown; the rest is counted, not drawn.
	shownChars = 4000
	// editableChars is the longest last message that may be edited; a
	// longer one is shown cut and sent as it is, or rejected.
	editableChars = 20000
	// shownMessages is how many of the latest messages are shown.
	shownMessages = 40
)

// samplingArmDelay is how long a sampling dialog's buttons stay disabled
// after it appears, so that the second click of a double-click on the
// previous dialog's Approve cannot land on the next queued request.
const samplingArmDelay = 700 * time.Millisecond

func (d *samplingRequestDialog) content() fyne.CanvasObject {
	d.keys = newDialogKeys()
	intro := widget.NewLabel(personName(d.Req.Server) + " asks the language model to answer the conversation below. " +
		"Nothing is sent until you approve; you may edit the last message first.")
	intro.Wrapping = fyne.TextWrapWord
	// Everything in the body is the server's text, under headings of ours;
	// the footer holds only Rootkeeper's words.
	body := container.NewVBox()
	if d.Req.SystemPrompt != "" {
		body.Add(samplingHeading("System prompt"))
		body.Add(wrapped(d.Req.SystemPrompt))
	}
	last := d.Req.LastUser()
	first := max(0, len(d.Req.Messages)-shownMessages)
	if first > 0 {
		body.Add(wrapped(fmt.Sprintf("(%d earlier messages not shown)", first)))
	}
	d.edit = nil
	for i := first; i < len(d.Req.Messages); i++ {
		m := d.Req.Messages[i]
		body.Add(samplingHeading(roleTitle(m.Role)))
		if i == last && len(m.Text) <= editableChars {
			d.edit = d.keys.entry(true)
			d.edit.SetText(words.SafeLines(m.Text))
			d.edit.SetMinRowsVisible(4)
			body.Add(d.edit)
			continue
		}
		body.Add(wrapped(m.Text))
	}
	if len(d.Req.ModelHints) > 0 || d.Req.IncludeContext != "" && d.Req.IncludeContext != "none" {
		body.Add(samplingHeading("What the server asked for"))
		var asked []string
		if len(d.Req.ModelHints) > 0 {
			asked = append(asked, "models: "+strings.Join(d.Req.ModelHints, ", "))
		}
		if d.Req.IncludeContext != "" && d.Req.IncludeContext != "none" {
			asked = append(asked, "context from: "+d.Req.IncludeContext)
		}
		body.Add(wrapped(strings.Join(asked, "\n")))
	}
	scroll := container.NewVScroll(body)
	scroll.SetMinSize(fyne.NewSize(600, min(body.MinSize().Height, 380)))
	facts := []string{fmt.Sprintf("At most %d tokens.", d.Req.MaxTokens),
		"Rootkeeper uses the configured model and includes no context from other servers."}
	if last >= 0 && d.edit == nil {
		facts = append(facts, "The last message is too long to edit here: approve sends it as it is.")
	}
	foot := widget.NewLabel(strings.Join(facts, " "))
	foot.TextStyle.Italic = true
	foot.Wrapping = fyne.TextWrapWord
	d.reject = d.keys.button("Reject", theme.CancelIcon(), d.doReject)
	d.approve = d.keys.button("Approve and send", theme.ConfirmIcon(), d.doApprove)
	d.approve.Importance = widget.HighImportance
	return container.NewBorder(intro, foot, nil, nil, scroll)
}

// Show opens the dialog over parent.
func (d *samplingRequestDialog) Show(parent fyne.Window) {
	d.show(parent, personName(d.Req.Server)+" asks for a model's answer", d.content(), d.reject, d.approve)
}

func (d *samplingRequestDialog) doApprove() {
	if !d.answer() {
		return
	}
	req := d.Req
	req.Messages = append([]app.SamplingMessage(nil), d.Req.Messages...)
	if i := req.LastUser(); i >= 0 && d.edit != nil && d.edit.Text != words.SafeLines(d.Req.Messages[i].Text) {
		// Edited: the person's text goes. Untouched: the server's own text
		// goes as it was, not the escaped form shown.
		req.Messages[i].Text = d.edit.Text
	}
	if d.OnApprove != nil {
		d.OnApprove(req)
	}
}

func (d *samplingRequestDialog) doReject() {
	if d.answer() && d.OnReject != nil {
		d.OnReject()
	}
}

// samplingResultDialog shows the model's answer before it goes back to the
// server: editable, then Send or Reject.
type samplingResultDialog struct {
	Req    app.SamplingRequest
	Res    app.SamplingResult
	OnSend func(app.SamplingResult)
	// OnReject is called when the person rejects the answer.
	OnReject func()

	text   *keyEntry
	send   *keyButton
	reject *keyButton
	answerOnce
}

func (d *samplingResultDialog) Headline() string {
	return "The model answered " + personName(d.Req.Server) + ". Review the answer before it is sent."
}

func (d *samplingResultDialog) content() fyne.CanvasObject {
	d.keys = newDialogKeys()
	intro := widget.NewLabel(fmt.Sprintf("%s answered. Nothing goes back to %s until you send it; you may edit the answer first.",
		d.Res.Model, personName(d.Req.Server)))
	intro.Wrapping = fyne.TextWrapWord
	d.text = d.keys.entry(true)
	d.text.SetText(d.Res.Text) // the model's answer: bounded by the token cap
	d.text.SetMinRowsVisible(10)
	foot := widget.NewLabel("")
	if d.Res.StopReason != "" {
		foot.SetText("Stopped because: " + d.Res.StopReason)
	}
	foot.TextStyle.Italic = true
	d.reject = d.keys.button("Reject", theme.CancelIcon(), d.doReject)
	d.send = d.keys.button("Send to "+personName(d.Req.Server), theme.MailSendIcon(), d.doSend)
	d.send.Importance = widget.HighImportance
	return container.NewBorder(intro, foot, nil, nil, d.text)
}

// Show opens the dialog over parent.
func (d *samplingResultDialog) Show(parent fyne.Window) {
	d.show(parent, "The model's answer for "+personName(d.Req.Server), d.content(), d.reject, d.send)
}

func (d *samplingResultDialog) doSend() {
	if !d.answer() {
		return
	}
	res := d.Res
	res.Text = d.text.Text
	if d.OnSend != nil {
		d.OnSend(res)
	}
}

func (d *samplingResultDialog) doReject() {
	if d.answer() && d.OnReject != nil {
		d.OnReject()
	}
}

// answerOnce is what the two sampling dialogs share: the Fyne dialog, and
// the rule that only the first answer counts (a double tap, or a tap after
// the request was withdrawn, does nothing).
//
// Its buttons stay disabled for samplingArmDelay after it appears, and
// so do Enter (the yes button) and Escape (the no button).
type answerOnce struct {
	keys *dialogKeys // made by content, before its widgets
	dlg  *dialog.CustomDialog
	body fyne.CanvasObject // what it shows, for tests
	// after runs f on the UI goroutine once d has passed (ui.after): the
	// clock the arming delay runs on.
	after    func(d time.Duration, f func())
	answered bool
}

func (a *answerOnce) show(parent fyne.Window, title string, body fyne.CanvasObject, no, yes *keyButton) {
	a.dlg, a.body = dialog.NewCustomWithoutButtons(title, body, parent), body
	a.dlg.SetButtons([]fyne.CanvasObject{no, layout.NewSpacer(), yes})
	a.dlg.Resize(fyne.NewSize(680, 0))
	no.Disable()
	yes.Disable()
	a.after(samplingArmDelay, func() {
		no.Enable()
		yes.Enable()
	})
	a.keys.attach(parent, a.dlg, press(yes, yes.OnTapped), press(no, no.OnTapped))
	a.dlg.Show()
}

// Hide closes the dialog without an answer (the request was withdrawn).
func (a *answerOnce) Hide() { a.answer() }

// answer closes the dialog and reports whether this is the first answer.
// (Before the dialog is armed its buttons are disabled, and Enter and
// Escape press only enabled buttons.)
func (a *answerOnce) answer() bool {
	if a.answered {
		return false
	}
	a.answered = true
	if a.dlg != nil {
		a.dlg.Hide()
	}
	return true
}

func samplingHeading(s string) fyne.CanvasObject {
	l := widget.NewLabel(s)
	l.TextStyle.Bold = true
	return l
}

// wrapped shows a server's text, at most shownChars of it, with control
// and invisible characters neutralised.
func wrapped(s string) fyne.CanvasObject {
	if len(s) > shownChars {
		cut := shownChars
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = fmt.Sprintf("%s… (%d more characters not shown)", s[:cut], len(s)-cut)
	}
	l := widget.NewLabel(words.SafeLines(s))
	l.Wrapping = fyne.TextWrapWord
	return l
}

func roleTitle(role string) string {
	if role == app.RoleAssistant {
		return "Assistant"
	}
	return "User"
}

// samplingReviewer is the GUI's app.SamplingReviewer. Its methods run on
// the MCP client's goroutines: each puts a dialog in the sampling queue
// (through u.do, on the UI goroutine) and waits for the person, for the end
// of the request's context, or for the app to quit; the last two reject.
type samplingReviewer struct {
	u    *ui
	quit <-chan struct{} // closed when the window has gone
}

var _ app.SamplingReviewer = (*samplingReviewer)(nil)

type reviewAnswer[T any] struct {
	v  T
	ok bool
}

func (r *samplingReviewer) ReviewRequest(ctx context.Context, req app.SamplingRequest) (app.SamplingRequest, bool, error) {
	ch := make(chan reviewAnswer[app.SamplingRequest], 1)
	d := &samplingRequestDialog{Req: req}
	d.after = r.u.after
	d.OnApprove = func(e app.SamplingRequest) { r.u.samplingDone(d); ch <- reviewAnswer[app.SamplingRequest]{e, true} }
	d.OnReject = func() { r.u.samplingDone(d); ch <- reviewAnswer[app.SamplingRequest]{} }
	a, err := wait(ctx, r, d, ch)
	return a.v, a.ok, err
}

func (r *samplingReviewer) ReviewResult(ctx context.Context, req app.SamplingRequest, res app.SamplingResult) (app.SamplingResult, bool, error) {
	ch := make(chan reviewAnswer[app.SamplingResult], 1)
	d := &samplingResultDialog{Req: req, Res: res}
	d.after = r.u.after
	d.OnSend = func(e app.SamplingResult) { r.u.samplingDone(d); ch <- reviewAnswer[app.SamplingResult]{e, true} }
	d.OnReject = func() { r.u.samplingDone(d); ch <- reviewAnswer[app.SamplingResult]{} }
	a, err := wait(ctx, r, d, ch)
	return a.v, a.ok, err
}

// wait queues p and waits for its answer on ch.
func wait[T any](ctx context.Context, r *samplingReviewer, p samplingPrompt, ch <-chan reviewAnswer[T]) (reviewAnswer[T], error) {
	select {
	case <-r.quit:
		return reviewAnswer[T]{}, nil
	default:
	}
	r.u.do(func() { r.u.queueSampling(p) })
	select {
	case a := <-ch:
		return a, nil
	case <-ctx.Done():
		select {
		case <-r.quit:
		default:
			r.u.do(func() { r.u.withdrawSampling(p) })
		}
		return reviewAnswer[T]{}, ctx.Err()
	case <-r.quit:
		return reviewAnswer[T]{}, nil
	}
}

// queueSampling adds p to the sampling queue and shows it if nothing else
// is shown. UI goroutine only.
func (u *ui) queueSampling(p samplingPrompt) {
	u.samplingQueue = append(u.samplingQueue, p)
	u.nextSampling()
}

// nextSampling shows the first queued sampling dialog unless one is open,
// raising the window and sending a notification, since a person has to
// answer and the window may be hidden in the tray.
func (u *ui) nextSampling() {
	if u.samplingOpen != nil || len(u.samplingQueue) == 0 {
		return
	}
	p := u.samplingQueue[0]
	u.samplingQueue = u.samplingQueue[1:]
	u.samplingOpen = p
	u.raise()
	u.notify("Rootkeeper", p.Headline())
	p.Show(u.win)
	u.onScreen("sampling review")
}

// samplingDone notes that p was answered and shows the next dialog.
func (u *ui) samplingDone(p samplingPrompt) {
	if u.samplingOpen == p {
		u.samplingOpen = nil
	}
	u.nextSampling()
}

// withdrawSampling closes or unqueues p, whose request ended unanswered.
func (u *ui) withdrawSampling(p samplingPrompt) {
	for i, q := range u.samplingQueue {
		if q == p {
			u.samplingQueue = append(u.samplingQueue[:i:i], u.samplingQueue[i+1:]...)
			return
		}
	}
	if u.samplingOpen == p {
		p.Hide()
		u.samplingDone(p)
	}
}
