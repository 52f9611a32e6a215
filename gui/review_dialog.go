package gui

import (
	"fmt"
	"image/color"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/hosts"
	"rootkeeper/app/words"
)

// Grouping choices of the review.
const (
	byServer = "By server"
	byFolder = "By folder"
)

// reviewDialog is one screen for every pending question of every server
// (app.Grid.Questions): grouped by server or by folder, filtered, with
// select all / none per screen and per group. Ticked questions are
// allowed and the others denied, all with one scope; Later closes it
// without deciding. The list is virtualised: twenty thousand questions
// cost the rows on screen.
type reviewDialog struct {
	Questions []app.Question
	// Info holds each root's access check and warnings, by path.
	Info map[string]rootInfo
	// Home shortens paths to ~/… (words.HomeShort).
	Home string
	// OnSubmit gets the indexes (into Questions) of the ticked questions
	// and the scope; every other question is to be denied.
	OnSubmit func(allowed map[int]bool, scope app.Scope)
	// OnLater is called when the person puts the questions off.
	OnLater func()

	ticked  []bool
	asked   map[string]bool // "SERVER\x00PATH" of every question shown
	growing bool            // questions are being added (see add)
	intro   *widget.Label
	rows    []reviewRow
	group   *keyRadio
	filter  *keyEntry
	count   *widget.Label
	all     *keyButton
	none    *keyButton
	list    *keyList
	scope   *keyRadio
	allow   *keyButton
	deny    *keyButton
	later   *keyButton
	dlg     *dialog.CustomDialog
	keys    *dialogKeys      // Enter allows the ticked, Escape is Later
	members map[string][]int // group -> question indexes shown
}

// reviewRow is a group heading (Q < 0) or one question.
type reviewRow struct {
	Group string
	Q     int
}

func (d *reviewDialog) content() fyne.CanvasObject {
	d.ticked = make([]bool, len(d.Questions))
	d.asked = map[string]bool{}
	for _, q := range d.Questions {
		d.asked[app.QuestionKey(q)] = true
	}
	d.intro = widget.NewLabel("")
	d.intro.Wrapping = fyne.TextWrapWord
	d.sayWho()
	d.keys = newDialogKeys()
	d.group = d.keys.radio([]string{byServer, byFolder}, func(string) { d.regroup() })
	d.filter = d.keys.entry(false)
	d.filter.SetPlaceHolder("Filter by server, folder name or path")
	d.filter.OnChanged = func(string) { d.regroup() }
	d.count = widget.NewLabel("")
	d.all = d.keys.button("Select all", nil, func() { d.tickShown(true) })
	d.none = d.keys.button("Select none", nil, func() { d.tickShown(false) })
	d.list = d.keys.list(func() int { return len(d.rows) }, d.newItem, d.updateItem)
	d.regroup()
	d.scope = d.keys.radio([]string{scopeAlways, scopeUntilQuit}, nil)
	d.deny = d.keys.button("Deny all", theme.CancelIcon(), func() { d.submit(false) })
	d.allow = d.keys.button("Allow ticked", theme.ConfirmIcon(), func() { d.submit(true) })
	d.allow.Importance = widget.HighImportance
	d.later = d.keys.button("Later", nil, func() {
		d.hide()
		if d.OnLater != nil {
			d.OnLater()
		}
	})
	tools := container.NewBorder(nil, nil, d.group, container.NewHBox(d.count, d.all, d.none), d.filter)
	remember := container.NewHBox(widget.NewLabel("Remember:"), d.scope)
	return container.NewBorder(container.NewVBox(d.intro, tools), remember, nil, nil, d.list)
}

// sayWho words the introduction: who asks, how many questions.
func (d *reviewDialog) sayWho() {
	servers := map[string]bool{}
	for _, q := range d.Questions {
		servers[q.Server] = true
	}
	who := plural(len(servers), "server") + " ask"
	if len(servers) == 1 {
		who = personName(d.Questions[0].Server) + " asks"
	}
	d.intro.SetText(fmt.Sprintf("%s to see folders: %s in all. Nothing is seen until you allow it. "+
		"Tick what may be seen; the rest is denied. You can change any answer later in Access.",
		who, plural(len(d.Questions), "question")))
}

// add puts questions that came while the review is open (another server
// connected) into it, unticked, with their folders' info.
func (d *reviewDialog) add(qs []app.Question, info []rootInfo) {
	for _, in := range info {
		d.Info[in.Root.Path] = in
	}
	for _, q := range qs {
		key := app.QuestionKey(q)
		if d.asked[key] {
			continue
		}
		d.asked[key] = true
		d.Questions = append(d.Questions, q)
		d.ticked = append(d.ticked, false)
	}
	d.sayWho()
	d.regroup()
}

// Show opens the review over parent.
func (d *reviewDialog) Show(parent fyne.Window) {
	body := d.content()
	d.dlg = dialog.NewCustomWithoutButtons("Folders to decide", body, parent)
	d.dlg.SetButtons([]fyne.CanvasObject{d.deny, d.later, layout.NewSpacer(), d.allow})
	size := parent.Canvas().Size()
	d.dlg.Resize(fyne.NewSize(max(640, size.Width-80), max(480, size.Height-80)))
	d.keys.attach(parent, d.dlg, press(d.allow, d.allow.OnTapped), press(d.later, d.later.OnTapped))
	d.dlg.Show()
}

func (d *reviewDialog) hide() {
	if d.dlg != nil {
		d.dlg.Hide()
	}
}

// groupOf is the heading question i sits under.
func (d *reviewDialog) groupOf(i int) string {
	if d.group.Selected == byFolder {
		return d.Questions[i].Root.Path
	}
	return d.Questions[i].Server
}

// regroup rebuilds the rows from the grouping and the filter.
func (d *reviewDialog) regroup() {
	if d.list == nil {
		return
	}
	q := filterQuery(d.filter.Text)
	d.members = map[string][]int{}
	var groups []string
	for i, qu := range d.Questions {
		if !matches(q, qu.Server, hosts.DisplayName(qu.Server), qu.Root.Name, qu.Root.Path) {
			continue
		}
		g := d.groupOf(i)
		if _, ok := d.members[g]; !ok {
			groups = append(groups, g)
		}
		d.members[g] = append(d.members[g], i)
	}
	if d.group.Selected == byFolder {
		slices.SortFunc(groups, words.CompareNatural)
	}
	d.rows = d.rows[:0]
	for _, g := range groups {
		d.rows = append(d.rows, reviewRow{Group: g, Q: -1})
		for _, i := range d.members[g] {
			d.rows = append(d.rows, reviewRow{Group: g, Q: i})
		}
	}
	d.list.Refresh()
	d.updateCount()
}

func (d *reviewDialog) updateCount() {
	n := 0
	for _, t := range d.ticked {
		if t {
			n++
		}
	}
	d.count.SetText(fmt.Sprintf("%d of %d ticked", n, len(d.ticked)))
}

// tickShown ticks or unticks every question the filter shows.
func (d *reviewDialog) tickShown(on bool) {
	for _, r := range d.rows {
		if r.Q >= 0 {
			d.ticked[r.Q] = on
		}
	}
	d.list.Refresh()
	d.updateCount()
}

// tickGroup ticks or unticks the shown questions under a heading.
func (d *reviewDialog) tickGroup(g string, on bool) {
	for _, i := range d.members[g] {
		d.ticked[i] = on
	}
	d.list.Refresh()
	d.updateCount()
}

func (d *reviewDialog) groupTicked(g string) bool {
	for _, i := range d.members[g] {
		if !d.ticked[i] {
			return false
		}
	}
	return len(d.members[g]) > 0
}

// reviewItem is one row: a heading with a check for its group, or a
// question with its check, path and warnings.
type reviewItem struct {
	widget.BaseWidget
	row   reviewRow
	check *keyCheck
	title *widget.Label
	where *pathLabel
	note  *widget.Label
	inset *canvas.Rectangle
	box   fyne.CanvasObject
}

func (d *reviewDialog) newItem() fyne.CanvasObject {
	it := &reviewItem{
		check: d.keys.check("", nil),
		title: widget.NewLabel(""),
		where: newPathLabel(""),
		note:  widget.NewLabel(""),
	}
	it.title.Truncation = fyne.TextTruncateEllipsis
	it.note.Truncation = fyne.TextTruncateEllipsis
	it.check.OnChanged = func(on bool) {
		if it.row.Q < 0 {
			d.tickGroup(it.row.Group, on)
			return
		}
		d.ticked[it.row.Q] = on
		d.list.Refresh() // the heading's check follows
		d.updateCount()
	}
	it.inset = canvas.NewRectangle(color.Transparent)
	right := container.NewHBox(it.note)
	it.box = container.NewBorder(nil, nil, container.NewHBox(it.inset, it.check,
		container.NewGridWrap(fyne.NewSize(260, it.title.MinSize().Height), it.title)), right, it.where)
	it.ExtendBaseWidget(it)
	return it
}

// CreateRenderer is part of fyne.Widget.
func (it *reviewItem) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(it.box) }

func (d *reviewDialog) updateItem(id widget.ListItemID, o fyne.CanvasObject) {
	it, ok := o.(*reviewItem)
	if !ok || id >= len(d.rows) {
		return
	}
	r := d.rows[id]
	it.row = r
	if r.Q < 0 {
		it.inset.SetMinSize(fyne.NewSize(0, 1))
		it.title.TextStyle.Bold = true
		n := len(d.members[r.Group])
		if d.group.Selected == byFolder {
			it.title.SetText(words.SafeText(baseOf(r.Group)) + " · " + plural(n, "server"))
			it.where.setPath(r.Group, d.Home)
		} else {
			it.title.SetText(personName(r.Group) + " · " + plural(n, "folder"))
			it.where.setText("", "")
		}
		it.note.SetText("")
		setCheckedQuietly(&it.check.Check, d.groupTicked(r.Group))
		it.Refresh()
		return
	}
	q := d.Questions[r.Q]
	it.inset.SetMinSize(fyne.NewSize(theme.Padding()*6, 1))
	it.title.TextStyle.Bold = false
	if d.group.Selected == byFolder {
		it.title.SetText(personName(q.Server))
		it.where.setText("", "")
	} else {
		it.title.SetText(words.SafeText(q.Root.Name))
		it.where.setPath(q.Root.Path, d.Home)
	}
	info := d.Info[q.Root.Path]
	switch {
	case len(info.Warnings) > 0:
		it.note.Importance = widget.WarningImportance
		it.note.SetText("⚠ " + info.Warnings[0])
	case info.Access.Status != "" && !info.Access.OK():
		it.note.Importance = widget.DangerImportance
		it.note.SetText("access check: " + healthText(info.Access))
	default:
		it.note.Importance = widget.MediumImportance
		it.note.SetText("")
	}
	setCheckedQuietly(&it.check.Check, d.ticked[r.Q])
	it.Refresh()
}

func (d *reviewDialog) submit(allowTicked bool) {
	allowed := map[int]bool{}
	if allowTicked {
		for i, t := range d.ticked {
			if t {
				allowed[i] = true
			}
		}
	}
	d.hide()
	if d.OnSubmit != nil {
		d.OnSubmit(allowed, scopeOf(d.scope.Selected))
	}
}

func baseOf(p string) string {
	if i := strings.LastIndexByte(strings.TrimRight(p, "/"), '/'); i >= 0 && i < len(p)-1 {
		return strings.TrimRight(p[i+1:], "/")
	}
	return p
}
