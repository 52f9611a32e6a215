package gui

import (
	"image/color"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Every dialog answers the keyboard the same way: Escape is its way out
// (Later, Cancel, Close, No), Enter its default button, Tab moves through
// its choices (Fyne's focus order, within the dialog), Space ticks or
// presses the focused one, and Enter on a focused button presses that
// button.
//
// Fyne hands a key to the focused widget, and to the canvas's OnTypedKey
// only when nothing is focused; its buttons, checks, radio items and lists
// swallow Escape and Enter. So a dialog's keys are in two places, set up
// by one dialogKeys: the canvas's handler (nothing focused, as when the
// dialog opens), and the dialog's own focusable widgets, made by
// dialogKeys (button, check, entry, radio, list), which pass Escape and
// Enter on. Dialogs over dialogs stack: the top one answers.
type dialogKeys struct {
	enter, escape func() // nil: the key does nothing
}

// newDialogKeys is the keys of a dialog about to be built; attach says
// what Enter and Escape do once it is.
func newDialogKeys() *dialogKeys { return &dialogKeys{} }

// key does what ev means to the dialog and reports whether it meant
// anything.
func (k *dialogKeys) key(ev *fyne.KeyEvent) bool {
	if k == nil {
		return false
	}
	switch ev.Name {
	case fyne.KeyEscape:
		if k.escape != nil {
			k.escape()
			return true
		}
	case fyne.KeyReturn, fyne.KeyEnter:
		if k.enter != nil {
			k.enter()
			return true
		}
	}
	return false
}

// attach makes the keys answer dlg on win's canvas until it closes: Enter
// calls enter, Escape calls escape (nil: nothing). It takes the focus
// from whatever had it, so that the first key goes to the dialog. Call it
// before dlg.Show.
func (k *dialogKeys) attach(win fyne.Window, dlg dialog.Dialog, enter, escape func()) {
	k.enter, k.escape = enter, escape
	c := win.Canvas()
	pushKeys(c, k)
	dlg.SetOnClosed(func() { popKeys(c, k) })
	c.Unfocus()
}

// press is what pressing b from the keyboard does: b's action, unless b is
// disabled (a dialog not yet armed, an empty choice).
func press(b fyne.Disableable, tap func()) func() {
	return func() {
		if !b.Disabled() && tap != nil {
			tap()
		}
	}
}

// keyStack is the dialogs open on one canvas, the top one last, and the
// canvas's own key handler from before the first.
type keyStack struct {
	prev func(*fyne.KeyEvent)
	open []*dialogKeys
}

// keyStacks is touched on the UI goroutine only.
var keyStacks = map[fyne.Canvas]*keyStack{}

func pushKeys(c fyne.Canvas, k *dialogKeys) {
	s := keyStacks[c]
	if s == nil {
		s = &keyStack{prev: c.OnTypedKey()}
		keyStacks[c] = s
		c.SetOnTypedKey(func(ev *fyne.KeyEvent) {
			if n := len(s.open); n > 0 && s.open[n-1].key(ev) {
				return
			}
			if s.prev != nil {
				s.prev(ev)
			}
		})
	}
	s.open = append(s.open, k)
}

func popKeys(c fyne.Canvas, k *dialogKeys) {
	s := keyStacks[c]
	if s == nil {
		return
	}
	s.open = slices.DeleteFunc(s.open, func(o *dialogKeys) bool { return o == k })
	if len(s.open) == 0 {
		c.SetOnTypedKey(s.prev)
		delete(keyStacks, c)
	}
}

// keyButton is a dialog's button: focused, Enter presses it and Escape is
// the dialog's.
type keyButton struct {
	widget.Button
	keys *dialogKeys
}

// button makes a button of the dialog.
func (k *dialogKeys) button(label string, icon fyne.Resource, tap func()) *keyButton {
	b := &keyButton{keys: k}
	b.Text, b.Icon, b.OnTapped = label, icon, tap
	b.ExtendBaseWidget(b)
	return b
}

// TypedKey is part of fyne.Focusable.
func (b *keyButton) TypedKey(ev *fyne.KeyEvent) {
	switch ev.Name {
	case fyne.KeyReturn, fyne.KeyEnter:
		press(b, b.OnTapped)()
	case fyne.KeyEscape:
		b.keys.key(ev)
	default:
		b.Button.TypedKey(ev)
	}
}

// keyCheck is a dialog's check box: Space ticks it, Escape and Enter are
// the dialog's.
type keyCheck struct {
	widget.Check
	keys *dialogKeys
}

// check makes a check box of the dialog.
func (k *dialogKeys) check(label string, changed func(bool)) *keyCheck {
	c := &keyCheck{keys: k}
	c.Text, c.OnChanged = label, changed
	c.ExtendBaseWidget(c)
	return c
}

// TypedKey is part of fyne.Focusable.
func (c *keyCheck) TypedKey(ev *fyne.KeyEvent) {
	if !c.keys.key(ev) {
		c.Check.TypedKey(ev)
	}
}

// keyEntry is a dialog's text field: Escape is the dialog's, and so is
// Enter in a one-line field; Tab leaves a many-line field too (people
// answer the dialog from the keyboard; they do not type tabs into it).
type keyEntry struct {
	widget.Entry
	keys *dialogKeys
}

// entry makes a one-line (or, with multiLine, many-line) text field of the
// dialog.
func (k *dialogKeys) entry(multiLine bool) *keyEntry {
	e := &keyEntry{keys: k}
	e.MultiLine = multiLine
	if multiLine {
		e.Wrapping = fyne.TextWrapWord
	}
	e.ExtendBaseWidget(e)
	return e
}

// TypedKey is part of fyne.Focusable.
func (e *keyEntry) TypedKey(ev *fyne.KeyEvent) {
	switch {
	case ev.Name == fyne.KeyEscape && e.keys.key(ev):
	case !e.MultiLine && (ev.Name == fyne.KeyReturn || ev.Name == fyne.KeyEnter) && e.keys.key(ev):
	default:
		e.Entry.TypedKey(ev)
	}
}

// AcceptsTab is part of fyne.Tabbable: Tab moves on.
func (e *keyEntry) AcceptsTab() bool { return false }

// keySelect is a dialog's drop-down: Space and the arrows choose, Escape
// and Enter are the dialog's.
type keySelect struct {
	widget.Select
	keys *dialogKeys
}

// choice makes a drop-down of the dialog (see widget.NewSelect).
func (k *dialogKeys) choice(options []string, changed func(string)) *keySelect {
	s := &keySelect{keys: k}
	s.Options, s.OnChanged, s.PlaceHolder = options, changed, "(Select one)"
	s.ExtendBaseWidget(s)
	return s
}

// TypedKey is part of fyne.Focusable.
func (s *keySelect) TypedKey(ev *fyne.KeyEvent) {
	if !s.keys.key(ev) {
		s.Select.TypedKey(ev)
	}
}

// keyList is a dialog's list: focused, Up and Down move and Space selects,
// Escape and Enter are the dialog's.
type keyList struct {
	widget.List
	keys *dialogKeys
}

// list makes a list of the dialog (see widget.NewList).
func (k *dialogKeys) list(length func() int, create func() fyne.CanvasObject, update func(widget.ListItemID, fyne.CanvasObject)) *keyList {
	l := &keyList{keys: k}
	l.Length, l.CreateItem, l.UpdateItem = length, create, update
	l.ExtendBaseWidget(l)
	return l
}

// TypedKey is part of fyne.Focusable.
func (l *keyList) TypedKey(ev *fyne.KeyEvent) {
	if !l.keys.key(ev) {
		l.List.TypedKey(ev)
	}
}

// keyRadio is a row of choices, one selected, that is one focus stop:
// Left and Right (or Up and Down) move the choice; Escape and Enter are
// the dialog's. (Fyne's RadioGroup makes each choice a focus stop that
// swallows both.)
type keyRadio struct {
	widget.BaseWidget
	Options   []string
	Selected  string
	OnChanged func(string)

	keys    *dialogKeys
	focused bool
	choices []*radioChoice
	box     *fyne.Container
}

// radio makes a row of choices of the dialog, the first selected.
func (k *dialogKeys) radio(options []string, changed func(string)) *keyRadio {
	r := &keyRadio{Options: options, OnChanged: changed, keys: k, box: container.NewHBox()}
	if len(options) > 0 {
		r.Selected = options[0]
	}
	for _, o := range options {
		c := &radioChoice{r: r, option: o, icon: widget.NewIcon(nil), label: widget.NewLabel(o),
			bg: canvas.NewRectangle(color.Transparent)}
		c.bg.CornerRadius = theme.InputRadiusSize()
		c.ExtendBaseWidget(c)
		r.choices = append(r.choices, c)
		r.box.Add(c)
	}
	r.ExtendBaseWidget(r)
	r.update()
	return r
}

// SetSelected selects option (and tells OnChanged when it changed).
func (r *keyRadio) SetSelected(option string) {
	if option == r.Selected || !slices.Contains(r.Options, option) {
		return
	}
	r.Selected = option
	r.Refresh()
	if r.OnChanged != nil {
		r.OnChanged(option)
	}
}

func (r *keyRadio) move(by int) {
	i := slices.Index(r.Options, r.Selected)
	if j := i + by; j >= 0 && j < len(r.Options) {
		r.SetSelected(r.Options[j])
	}
}

// CreateRenderer is part of fyne.Widget.
func (r *keyRadio) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(r.box) }

// Refresh draws the selection and the focus again.
func (r *keyRadio) Refresh() {
	r.update()
	r.BaseWidget.Refresh()
}

func (r *keyRadio) update() {
	for _, c := range r.choices {
		on := c.option == r.Selected
		if on {
			c.icon.Resource = theme.NewPrimaryThemedResource(theme.RadioButtonCheckedIcon())
		} else {
			c.icon.Resource = theme.RadioButtonIcon()
		}
		c.bg.FillColor = color.Transparent
		if on && r.focused {
			c.bg.FillColor = theme.Color(theme.ColorNameFocus)
		}
		c.Refresh()
	}
}

// FocusGained is part of fyne.Focusable.
func (r *keyRadio) FocusGained() { r.focused = true; r.Refresh() }

// FocusLost is part of fyne.Focusable.
func (r *keyRadio) FocusLost() { r.focused = false; r.Refresh() }

// TypedRune is part of fyne.Focusable.
func (r *keyRadio) TypedRune(rune) {}

// TypedKey is part of fyne.Focusable.
func (r *keyRadio) TypedKey(ev *fyne.KeyEvent) {
	switch ev.Name {
	case fyne.KeyLeft, fyne.KeyUp:
		r.move(-1)
	case fyne.KeyRight, fyne.KeyDown:
		r.move(1)
	default:
		r.keys.key(ev)
	}
}

// radioChoice is one choice of a keyRadio, tapped to select it.
type radioChoice struct {
	widget.BaseWidget
	r      *keyRadio
	option string
	icon   *widget.Icon
	label  *widget.Label
	bg     *canvas.Rectangle
}

// CreateRenderer is part of fyne.Widget.
func (c *radioChoice) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewStack(c.bg, container.NewHBox(c.icon, c.label)))
}

// Tapped is part of fyne.Tappable.
func (c *radioChoice) Tapped(*fyne.PointEvent) { c.r.SetSelected(c.option) }

// confirmDialog is a question with two answers, from the keyboard too:
// Enter is yes, Escape no.
type confirmDialog struct {
	*dialog.CustomDialog
	yes, no  *keyButton
	callback func(bool)
	answered bool
}

// newConfirm asks about content with the answers yes (the default) and
// no; callback gets the answer once. k holds the keys content's widgets
// were made with (nil: none were). Show it with Show.
func newConfirm(k *dialogKeys, title string, content fyne.CanvasObject, yes, no string, callback func(bool), win fyne.Window) *confirmDialog {
	d := &confirmDialog{callback: callback}
	if k == nil {
		k = newDialogKeys()
	}
	d.yes = k.button(yes, theme.ConfirmIcon(), d.Confirm)
	d.yes.Importance = widget.HighImportance
	d.no = k.button(no, theme.CancelIcon(), d.Dismiss)
	d.CustomDialog = dialog.NewCustomWithoutButtons(title, content, win)
	d.SetButtons([]fyne.CanvasObject{d.no, layout.NewSpacer(), d.yes})
	k.attach(win, d.CustomDialog, press(d.yes, d.Confirm), d.Dismiss)
	return d
}

// confirmText is newConfirm with a message.
func confirmText(title, message, yes, no string, callback func(bool), win fyne.Window) *confirmDialog {
	d := newConfirm(nil, title, wrapped(message), yes, no, callback, win)
	d.Resize(fyne.NewSize(520, 0))
	return d
}

// Confirm answers yes.
func (d *confirmDialog) Confirm() { d.answer(true) }

// Dismiss answers no.
func (d *confirmDialog) Dismiss() { d.answer(false) }

func (d *confirmDialog) answer(yes bool) {
	if d.answered {
		return
	}
	d.answered = true
	d.Hide()
	if d.callback != nil {
		d.callback(yes)
	}
}

// newInfo shows content with one button (label, "OK" or "Close"), which
// Enter and Escape press too. k holds the keys content's widgets were made
// with (nil: none were).
func newInfo(k *dialogKeys, title string, content fyne.CanvasObject, label string, win fyne.Window) *dialog.CustomDialog {
	if k == nil {
		k = newDialogKeys()
	}
	d := dialog.NewCustomWithoutButtons(title, content, win)
	ok := k.button(label, nil, d.Hide)
	ok.Importance = widget.HighImportance
	d.SetButtons([]fyne.CanvasObject{ok})
	k.attach(win, d, d.Hide, d.Hide)
	return d
}

// keyed makes a dialog Fyne built (an error, a file picker) answer Escape
// and Enter while nothing in it has the focus.
func keyed(win fyne.Window, d dialog.Dialog, enter, escape func()) dialog.Dialog {
	newDialogKeys().attach(win, d, enter, escape)
	return d
}

// pickFolder is Fyne's folder picker; Escape closes it while nothing in
// it has the focus.
func pickFolder(win fyne.Window, callback func(fyne.ListableURI, error)) {
	d := dialog.NewFolderOpen(callback, win)
	keyed(win, d, nil, d.Dismiss)
	d.Show()
}
