package gui

import (
	"image/color"
	"maps"
	"slices"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/hosts"
	"rootkeeper/app/words"
)

// pathLabel shows a path (or any text), cut with an ellipsis when it does
// not fit; then hovering shows the whole of it (or full, when set) in a
// tooltip.
type pathLabel struct {
	widget.Label
	full  string
	whole string // the path from ~, uncut, when set with setPath
	// fitted is the whole and the width Text was last fitted to: a row
	// laid out again at the same width measures nothing.
	fitted struct {
		whole string
		width float32
	}
	tip *widget.PopUp
}

// newPathLabel shows path in a pathLabel. The text is not Rootkeeper's (a
// folder's name, what a server reported), so
// it goes through words.SafeText: no bidi override or invisible character can
// reorder or hide what the person reads.
func newPathLabel(path string) *pathLabel {
	path = words.SafeText(path)
	l := &pathLabel{full: path}
	l.Text = path
	l.Truncation = fyne.TextTruncateEllipsis
	l.ExtendBaseWidget(l)
	return l
}

// setText shows text, with full in the tooltip.
func (l *pathLabel) setText(text, full string) {
	l.whole, l.fitted.whole = "", ""
	l.full = words.SafeText(full)
	l.SetText(words.SafeText(text))
}

// setPath shows path as people write it: from "~" under home, and, when
// it does not fit, with folders in the middle left out
// ("~/src/…/payments-api", words.CutMiddle) rather than its end cut off.
// The whole path is in the tooltip.
func (l *pathLabel) setPath(path, home string) {
	l.full = words.SafeText(path)
	l.whole = words.SafeText(words.HomeShort(path, home))
	if l.whole == "" {
		l.SetText("")
		return
	}
	l.fit()
}

// Resize fits a path set with setPath to the new width.
func (l *pathLabel) Resize(size fyne.Size) {
	l.Label.Resize(size)
	if l.whole != "" {
		l.fit()
	}
}

// fit shows as much of l.whole as the label's width holds, cut in the
// middle. Before the label has a size it shows all of it.
func (l *pathLabel) fit() {
	text := l.whole
	room := l.Size().Width - 2*theme.InnerPadding()
	if l.fitted.whole == l.whole && l.fitted.width == room {
		return
	}
	l.fitted.whole, l.fitted.width = l.whole, room
	if room > 0 {
		text = fitMiddle(l.whole, func(s string) bool {
			return fyne.MeasureText(s, theme.TextSize(), l.TextStyle).Width <= room
		})
	}
	if text != l.Text {
		l.Text = text
		l.Refresh()
	}
}

// fitMiddle is the longest words.CutMiddle of s that fits.
func fitMiddle(s string, fits func(string) bool) string {
	if fits(s) {
		return s
	}
	lo, hi := 1, utf8.RuneCountInString(s)-1 // lo always fits or is the floor
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(words.CutMiddle(s, mid)) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return words.CutMiddle(s, lo)
}

// cut reports whether the tooltip has something to add: the text does not
// fit the label's width, or the tooltip says more.
func (l *pathLabel) cut() bool {
	if l.full != l.Text {
		return true
	}
	w := fyne.MeasureText(l.Text, theme.TextSize(), l.TextStyle).Width
	return w+2*theme.InnerPadding() > l.Size().Width
}

// MouseIn shows the tooltip when the text is cut.
func (l *pathLabel) MouseIn(e *desktop.MouseEvent) {
	if !l.cut() || l.full == "" {
		return
	}
	c := fyne.CurrentApp().Driver().CanvasForObject(l)
	if c == nil {
		return
	}
	tip := widget.NewLabel(l.full)
	l.tip = widget.NewPopUp(tip, c)
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(l).Add(fyne.NewPos(0, l.Size().Height))
	if room := c.Size().Width - tip.MinSize().Width - 2*theme.Padding(); pos.X > room {
		pos.X = max(0, room)
	}
	l.tip.ShowAtPosition(pos)
}

// MouseMoved does nothing; it is part of desktop.Hoverable.
func (l *pathLabel) MouseMoved(*desktop.MouseEvent) {}

// MouseOut hides the tooltip.
func (l *pathLabel) MouseOut() {
	if l.tip != nil {
		l.tip.Hide()
		l.tip = nil
	}
}

// newBanner is a tinted strip across the window with a message and an
// optional action button.
func newBanner(msg string, action fyne.CanvasObject) fyne.CanvasObject {
	bg := canvas.NewRectangle(withAlpha(theme.Color(theme.ColorNameWarning), 0x40))
	l := widget.NewLabel(msg)
	l.Wrapping = fyne.TextWrapWord
	row := container.NewBorder(nil, nil, widget.NewIcon(theme.NewWarningThemedResource(theme.WarningIcon())), action, l)
	return container.NewStack(bg, container.NewPadded(row))
}

func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), a}
}

// personName is how a dialog names a server or a host to a person:
// "filesystem (Claude Code)" for the "claude-code.filesystem" that hosts
// protect imported (hosts.DisplayName). status and the state file keep
// the internal name.
func personName(name string) string { return words.SafeText(hosts.DisplayName(name)) }

// emptyState is what a list shows while it has nothing in it: a sentence
// or two, centred, and the action that fills it. Its label does not wrap:
// a wrapping label in a centring container is given no width and draws
// one letter per line. Lines break where the text says.
type emptyState struct {
	widget.BaseWidget
	label   *widget.Label
	actions *fyne.Container
	box     fyne.CanvasObject
}

func newEmptyState() *emptyState {
	e := &emptyState{label: widget.NewLabel(""), actions: container.NewHBox()}
	e.label.Alignment = fyne.TextAlignCenter
	e.label.TextStyle.Italic = true
	e.box = container.NewCenter(container.NewVBox(e.label, container.NewCenter(e.actions)))
	e.ExtendBaseWidget(e)
	return e
}

// CreateRenderer is part of fyne.Widget.
func (e *emptyState) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(e.box) }

// show says text with the given actions (buttons), and shows it.
func (e *emptyState) show(text string, actions ...fyne.CanvasObject) {
	e.label.SetText(text)
	if !slices.Equal(e.actions.Objects, actions) {
		e.actions.Objects = actions
	}
	e.Show()
	// A container lays its objects out again only when refreshed: the
	// label's new width must reach the centring.
	e.box.Refresh()
}

// hint is the text shown where a list is empty: what to do next.
func hint(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	l.Alignment = fyne.TextAlignCenter
	l.TextStyle.Italic = true
	return l
}

// healthText says what a health status means, in a few words.
func healthText(h app.Health) string {
	switch h.Status {
	case app.HealthOK:
		return "OK"
	case app.HealthUnknown:
		return "not checked yet"
	case app.HealthMissing:
		return "missing"
	case app.HealthNotDir:
		return "not a folder"
	case app.HealthUnreadable:
		return "unreadable"
	case app.HealthUnmounted:
		return "drive unmounted"
	case app.HealthMoved:
		if h.MovedTo != "" {
			return "moved to " + words.SafeText(h.MovedTo)
		}
		return "moved"
	}
	return string(h.Status)
}

// healthBadge is a short coloured label for a root's health. A root that
// is off is not checked, and says nothing.
func healthBadge(h app.Health, enabled bool) *widget.Label {
	if !enabled && h.Status == app.HealthUnknown {
		return widget.NewLabel("")
	}
	l := widget.NewLabel(healthText(h))
	switch {
	case h.OK():
		l.Importance = widget.SuccessImportance
	case h.Status == app.HealthUnknown:
		l.TextStyle.Italic = true
	default:
		l.Importance = widget.DangerImportance
	}
	return l
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// fillList replaces list's content with n items separated by lines, or with
// the empty hint when there are none.
func fillList(list *fyne.Container, empty string, n int, item func(i int) fyne.CanvasObject) {
	list.Objects = nil
	if n == 0 {
		list.Add(hint(empty))
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			list.Add(widget.NewSeparator())
		}
		list.Add(item(i))
	}
	list.Refresh()
}

// rowWidgets remembers which row widget of a widget.List shows which row,
// so that a new snapshot redraws just the rows that changed: Fyne's own
// List.RefreshItem refreshes the whole list (and builds a template row to
// measure), which at a thousand changed rows is a thousand refreshes.
type rowWidgets[W comparable] struct {
	byID    map[widget.ListItemID]W
	of      map[W]widget.ListItemID
	created int // row widgets made, for tests
	drawn   int // rows drawn, for tests
}

// bind notes that w now shows row id.
func (r *rowWidgets[W]) bind(id widget.ListItemID, w W) {
	r.drawn++
	if r.byID == nil {
		r.byID = map[widget.ListItemID]W{}
		r.of = map[W]widget.ListItemID{}
	}
	if old, ok := r.of[w]; ok && r.byID[old] == w {
		delete(r.byID, old)
	}
	if prev, ok := r.byID[id]; ok {
		delete(r.of, prev) // a widget the list dropped from its pool
	}
	r.byID[id] = w
	r.of[w] = id
}

// redrawRows shows next where the list showed prev: with as many rows, it
// redraws only the rows whose line changed, through update on the widget
// showing it (rows off screen have none and cost nothing); otherwise the
// list refreshes whole.
func redrawRows[L comparable, W interface {
	comparable
	fyne.CanvasObject
}](list *widget.List, rows *rowWidgets[W], prev, next []L, update func(widget.ListItemID, fyne.CanvasObject)) {
	if len(prev) != len(next) {
		list.Refresh()
		return
	}
	for i := range next {
		if next[i] == prev[i] {
			continue
		}
		if w, ok := rows.byID[i]; ok {
			update(i, w)
		}
	}
}
