package gui

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/hosts"
	"rootkeeper/app/words"
)

// The switch positions as the window words them (app.Accesses order).
var accessLabels = map[app.Access]string{
	app.AccessAllowed:   "Allowed",
	app.AccessUntilQuit: "Allowed until quit",
	app.AccessDenied:    "Denied",
	app.AccessNotAsked:  "Not asked yet",
}

func accessOptions() []string {
	out := make([]string, len(app.Accesses))
	for i, a := range app.Accesses {
		out[i] = accessLabels[a]
	}
	return out
}

func accessOfLabel(label string) app.Access {
	for a, l := range accessLabels {
		if l == label {
			return a
		}
	}
	return ""
}

// newAccessSwitch is the one switch of a (server, folder) pair; moving it
// calls set with the new position. In a dialog, k passes Escape and Enter
// on to it (nil in a tab).
func newAccessSwitch(k *dialogKeys, set func(app.Access)) *keySelect {
	s := k.choice(accessOptions(), nil)
	s.OnChanged = func(label string) { set(accessOfLabel(label)) }
	return s
}

// showAccess puts the switch at a without calling its OnChanged.
func showAccess(s *keySelect, a app.Access) {
	f := s.OnChanged
	s.OnChanged = nil
	s.SetSelected(accessLabels[a])
	s.OnChanged = f
}

// setAccess records the person's moves of switches in the window.
func (u *ui) setAccess(what string, changes []app.Change) {
	if len(changes) == 0 {
		return
	}
	u.update(what, func(s *app.State) error { return s.Apply(changes, app.ByWindow) }, nil)
}

// accessTab is the per-server view of consent, the way a phone's
// permission screen shows one app: pick a server, see every folder with one
// switch, and act on many at once (allow all under a folder, deny the
// rest).
type accessTab struct {
	u       *ui
	content fyne.CanvasObject
	server  *widget.Select
	filter  *widget.Entry
	summary *widget.Label
	under   *widget.Button
	rest    *widget.Button
	list    *widget.List
	empty   *emptyState
	// toHosts and find are the empty state's actions.
	toHosts *widget.Button
	find    *widget.Button
	// waiting lists the server's open requests (what it asked for, or
	// tried to reach), each with Answer…; waitKey is what it shows, and
	// answers its buttons (tests).
	waiting *fyne.Container
	waitKey string
	answers []*widget.Button

	grid  *app.Grid
	all   []accessLine
	shown []accessLine
	rows  rowWidgets[*accessItem]
}

// accessLine is one folder in the per-server view.
type accessLine struct {
	Root   app.Root
	Access app.Access
	Seen   bool // the server sees it right now
	Note   string
}

func newAccessTab(u *ui) *accessTab {
	t := &accessTab{u: u}
	t.server = widget.NewSelect(nil, func(string) { t.rebuild() })
	t.server.PlaceHolder = "Pick a server"
	t.filter = widget.NewEntry()
	t.filter.SetPlaceHolder("Filter folders by name or path")
	t.filter.OnChanged = func(string) { t.apply() }
	t.summary = widget.NewLabel("")
	t.summary.Truncation = fyne.TextTruncateEllipsis
	t.under = widget.NewButtonWithIcon("Allow all under…", theme.ConfirmIcon(), t.askUnder)
	t.rest = widget.NewButtonWithIcon("Deny the rest", theme.CancelIcon(), t.denyRest)
	t.list = widget.NewList(func() int { return len(t.shown) }, t.newItem, t.updateItem)
	t.empty = newEmptyState()
	t.toHosts = widget.NewButtonWithIcon("Add a server or protect a host", theme.ContentAddIcon(), func() { u.selectTab("Hosts") })
	t.toHosts.Importance = widget.HighImportance
	t.find = widget.NewButtonWithIcon("Find projects", theme.SearchIcon(), func() { u.selectTab("Roots"); u.findProjects() })
	t.find.Importance = widget.HighImportance
	pick := container.NewBorder(nil, nil, widget.NewLabel("Server:"), container.NewHBox(t.under, t.rest), t.server)
	t.waiting = container.NewVBox()
	top := container.NewVBox(pick, t.summary, t.waiting, t.filter)
	t.content = container.NewBorder(top, nil, nil, nil, container.NewStack(t.list, t.empty))
	return t
}

func (t *accessTab) render(snap *app.Snapshot, g *app.Grid) {
	t.grid = g
	names := g.Taking()
	if !slices.Equal(names, t.server.Options) {
		t.server.Options = slices.Clone(names)
		t.server.Refresh()
	}
	if !slices.Contains(names, t.server.Selected) {
		if len(names) > 0 {
			t.server.SetSelected(names[0]) // calls rebuild
			return
		}
		t.server.ClearSelected()
	}
	t.rebuild()
}

// rebuild computes every folder's line for the selected server.
func (t *accessTab) rebuild() {
	if t.grid == nil {
		return
	}
	server := t.server.Selected
	snap := t.grid.Snapshot()
	t.all = t.all[:0]
	counts := map[app.Access]int{}
	seen := 0
	if server != "" {
		for _, r := range snap.State.Roots {
			l := accessLine{Root: r, Access: t.grid.Access(server, r.Path)}
			l.Seen = slices.Contains(t.grid.SeenBy(r.Path), server)
			if l.Seen {
				seen++
			}
			// An allowed folder not seen says why, in app's one order.
			why := app.Seen
			if l.Access == app.AccessAllowed || l.Access == app.AccessUntilQuit {
				why = app.WhyNotSeen(snap, server, r)
			}
			switch why {
			case app.NotSeenOff:
				l.Note = "folder turned off"
			case app.NotSeenPaused:
				l.Note = "sharing paused"
			case app.NotSeenHealth:
				l.Note = "access check: " + healthText(snap.Health[r.Path])
			}
			counts[l.Access]++
			t.all = append(t.all, l)
		}
	}
	slices.SortFunc(t.all, func(a, b accessLine) int { return words.CompareNatural(a.Root.Path, b.Root.Path) })
	t.renderRequests(snap, server)
	if server == "" {
		t.summary.SetText("")
		t.under.Disable()
		t.rest.Disable()
	} else {
		t.summary.SetText(fmt.Sprintf("%s sees %s now · %d allowed · %d denied · %d not asked yet",
			words.SafeText(server), plural(seen, "folder"), counts[app.AccessAllowed]+counts[app.AccessUntilQuit],
			counts[app.AccessDenied], counts[app.AccessNotAsked]))
		t.under.Enable()
		if counts[app.AccessNotAsked] > 0 {
			t.rest.Enable()
		} else {
			t.rest.Disable()
		}
	}
	t.apply()
}

// accessMaxRequests bounds the requests listed above a server's folders;
// past it, a line counts the rest.
const accessMaxRequests = 5

// renderRequests lists the open requests of the server picked (those whose
// calls wait first), each with Answer…, which asks it now.
func (t *accessTab) renderRequests(snap *app.Snapshot, server string) {
	var reqs []app.Request
	if server != "" {
		reqs = app.RequestsByUrgency(snap.State.RequestsFor(server), t.u.now())
	}
	home := t.u.home()
	texts := make([]string, len(reqs))
	for i, r := range reqs {
		texts[i] = app.RequestTextFor(r, home, hosts.DisplayName)
	}
	key := server + "\x00" + strings.Join(texts, "\x00")
	if key == t.waitKey {
		return
	}
	t.waitKey = key
	t.waiting.Objects = nil
	t.answers = nil
	for i, r := range reqs {
		if i == accessMaxRequests {
			more := widget.NewLabel(fmt.Sprintf("and %d more waiting for your answer", len(reqs)-i))
			more.TextStyle.Italic = true
			t.waiting.Add(more)
			break
		}
		answer := widget.NewButton("Answer…", func() { t.u.answerRequest(r.Server, r.Path) })
		t.answers = append(t.answers, answer)
		text := widget.NewLabel("Waiting for your answer: " + texts[i])
		text.Truncation = fyne.TextTruncateEllipsis
		icon := widget.NewIcon(theme.NewWarningThemedResource(theme.WarningIcon()))
		t.waiting.Add(container.NewBorder(nil, nil, icon, answer, text))
	}
	if len(reqs) == 0 {
		t.waiting.Hide() // no gap where nothing waits
	} else {
		t.waiting.Show()
	}
	t.waiting.Refresh()
}

func (t *accessTab) apply() {
	q := filterQuery(t.filter.Text)
	prev := t.shown
	next := make([]accessLine, 0, len(t.all))
	for _, l := range t.all {
		if matches(q, l.Root.Name, l.Root.Path) {
			next = append(next, l)
		}
	}
	t.shown = next
	redrawRows(t.list, &t.rows, prev, next, t.updateItem)
	switch {
	case len(t.shown) > 0:
		t.empty.Hide()
	case t.server.Selected == "":
		t.empty.show("No server takes folders yet.\nAdd one, or protect a host such as Claude Code or Cursor: its servers then ask you first.", t.toHosts)
	case len(t.all) > 0:
		t.empty.show("No folder matches the filter.")
	default:
		t.empty.show("No folders yet.\nRootkeeper can find your projects; nothing is shared until you allow it.", t.find)
	}
}

// accessItem is one folder row of the per-server view.
type accessItem struct {
	widget.BaseWidget
	path   string
	name   *widget.Label
	where  *pathLabel
	note   *widget.Label
	seen   *widget.Icon
	choice *keySelect
	box    fyne.CanvasObject
}

func (t *accessTab) newItem() fyne.CanvasObject {
	it := &accessItem{
		name:  widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		where: newPathLabel(""),
		note:  widget.NewLabel(""),
		seen:  widget.NewIcon(nil),
	}
	it.note.TextStyle.Italic = true
	it.choice = newAccessSwitch(nil, func(a app.Access) {
		server, path := t.server.Selected, it.path
		t.u.setAccess("change what "+server+" may see", []app.Change{{Server: server, Root: path, Access: a}})
	})
	it.name.Truncation = fyne.TextTruncateEllipsis
	it.note.Truncation = fyne.TextTruncateEllipsis
	h := it.choice.MinSize().Height
	left := container.NewHBox(it.seen, container.NewGridWrap(fyne.NewSize(220, h), it.name))
	right := container.NewHBox(container.NewGridWrap(fyne.NewSize(200, h), it.note),
		container.NewGridWrap(fyne.NewSize(190, h), it.choice))
	it.box = container.NewBorder(nil, nil, left, right, it.where)
	it.ExtendBaseWidget(it)
	t.rows.created++
	return it
}

// CreateRenderer is part of fyne.Widget.
func (it *accessItem) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(it.box) }

func (t *accessTab) updateItem(id widget.ListItemID, o fyne.CanvasObject) {
	it, ok := o.(*accessItem)
	if !ok || id >= len(t.shown) {
		return
	}
	l := t.shown[id]
	t.rows.bind(id, it)
	it.path = l.Root.Path
	it.name.SetText(words.SafeText(l.Root.Name))
	it.where.setPath(l.Root.Path, t.u.home())
	if l.Seen {
		it.seen.SetResource(theme.NewSuccessThemedResource(theme.VisibilityIcon()))
	} else {
		it.seen.SetResource(theme.NewDisabledResource(theme.VisibilityOffIcon()))
	}
	it.note.SetText(l.Note)
	showAccess(it.choice, l.Access)
}

// askUnder asks for a folder and allows the server every root in it.
func (t *accessTab) askUnder() {
	server := t.server.Selected
	if server == "" || t.grid == nil {
		return
	}
	parents := parentFolders(t.grid.Snapshot())
	entry := widget.NewSelectEntry(parents)
	if q := strings.TrimSpace(t.filter.Text); filepath.IsAbs(q) {
		entry.SetText(q)
	} else if len(parents) > 0 {
		entry.SetText(parents[0])
	}
	form := newConfirm(nil, "Allow "+personName(server)+" every folder under…",
		widget.NewForm(widget.NewFormItem("Folder", entry)), "Allow", "Cancel", func(ok bool) {
			if ok {
				t.allowUnder(server, filepath.Clean(strings.TrimSpace(entry.Text)))
			}
		}, t.u.win)
	form.Resize(fyne.NewSize(560, 200))
	form.Show()
}

func (t *accessTab) allowUnder(server, dir string) {
	t.u.setAccess("allow "+server+" everything under "+dir, t.grid.AllowUnder(server, dir))
}

func (t *accessTab) denyRest() {
	server := t.server.Selected
	if server == "" || t.grid == nil {
		return
	}
	t.u.setAccess("deny "+server+" the folders it was not asked about", t.grid.DenyRest(server))
}

// parentFolders are the folders holding roots, the likely answers to
// "allow all under…", naturally sorted.
func parentFolders(snap *app.Snapshot) []string {
	seen := map[string]bool{}
	for _, r := range snap.State.Roots {
		seen[filepath.Dir(r.Path)] = true
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	slices.SortFunc(out, words.CompareNatural)
	return out
}

// folderAccess is the per-folder view of consent: one folder, every server
// with its switch. It follows the snapshots while open.
type folderAccess struct {
	u     *ui
	path  string
	title *pathLabel
	list  *widget.List
	lines []folderAccessLine
	dlg   dialog.Dialog
	keys  *dialogKeys // Escape and Enter close it, from its switches too
	items []*folderAccessItem
}

type folderAccessLine struct {
	Server string
	Access app.Access
	Seen   bool
	Off    bool // the server takes no roots
}

// showFolderAccess opens the per-folder view for the root at path.
func (u *ui) showFolderAccess(path string) {
	r, ok := u.core.Snapshot().State.Root(path)
	if !ok {
		return
	}
	f := &folderAccess{u: u, path: path, keys: newDialogKeys()}
	f.title = newPathLabel("")
	f.title.setPath(r.Path, u.home())
	f.list = widget.NewList(func() int { return len(f.lines) }, f.newItem, f.updateItem)
	f.render(u.core.Snapshot(), app.NewGrid(u.core.Snapshot()))
	body := container.NewBorder(f.title, nil, nil, nil, f.list)
	f.dlg = newInfo(f.keys, "Who may see "+words.SafeText(r.Name), body, "Close", u.win)
	f.dlg.SetOnClosed(func() {
		if u.folderView == f {
			u.folderView = nil
		}
	})
	f.dlg.Resize(fyne.NewSize(640, 480))
	u.folderView = f
	f.dlg.Show()
}

func (f *folderAccess) render(snap *app.Snapshot, g *app.Grid) {
	if _, ok := snap.State.Root(f.path); !ok {
		if f.dlg != nil {
			f.dlg.Hide()
		}
		return
	}
	seen := g.SeenBy(f.path)
	lines := make([]folderAccessLine, 0, len(snap.State.Servers))
	for _, srv := range snap.State.Servers {
		lines = append(lines, folderAccessLine{Server: srv.Name, Access: g.Access(srv.Name, f.path),
			Seen: slices.Contains(seen, srv.Name), Off: srv.Mode() == app.RootsOff})
	}
	slices.SortFunc(lines, func(a, b folderAccessLine) int { return words.CompareNatural(a.Server, b.Server) })
	f.lines = lines
	f.list.Refresh()
}

type folderAccessItem struct {
	widget.BaseWidget
	server string
	seen   *widget.Icon
	name   *widget.Label
	off    *widget.Label
	choice *keySelect
	box    fyne.CanvasObject
}

func (f *folderAccess) newItem() fyne.CanvasObject {
	it := &folderAccessItem{seen: widget.NewIcon(nil), name: widget.NewLabel(""), off: widget.NewLabel("takes no roots (roots mode off)")}
	it.off.TextStyle.Italic = true
	it.choice = newAccessSwitch(f.keys, func(a app.Access) {
		f.u.setAccess("change what "+it.server+" may see", []app.Change{{Server: it.server, Root: f.path, Access: a}})
	})
	it.name.Truncation = fyne.TextTruncateEllipsis
	it.box = container.NewBorder(nil, nil, it.seen, container.NewStack(it.off,
		container.NewGridWrap(fyne.NewSize(190, it.choice.MinSize().Height), it.choice)), it.name)
	it.ExtendBaseWidget(it)
	f.items = append(f.items, it)
	return it
}

// CreateRenderer is part of fyne.Widget.
func (it *folderAccessItem) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(it.box)
}

func (f *folderAccess) updateItem(id widget.ListItemID, o fyne.CanvasObject) {
	it, ok := o.(*folderAccessItem)
	if !ok || id >= len(f.lines) {
		return
	}
	l := f.lines[id]
	it.server = l.Server
	it.name.SetText(personName(l.Server))
	if l.Seen {
		it.seen.SetResource(theme.NewSuccessThemedResource(theme.VisibilityIcon()))
	} else {
		it.seen.SetResource(theme.NewDisabledResource(theme.VisibilityOffIcon()))
	}
	if l.Off {
		it.off.Show()
		it.choice.Hide()
	} else {
		it.off.Hide()
		it.choice.Show()
		showAccess(it.choice, l.Access)
	}
}
