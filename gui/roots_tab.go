package gui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// rootsTab lists every root (naturally sorted, filtered) with its path,
// health, branch, who sees it, an enable switch, Access… (the per-folder
// view of consent) and Remove. The list is virtualised: a thousand roots
// cost the widgets of the rows on screen, and a new snapshot refreshes only
// the rows whose text changed.
type rootsTab struct {
	u       *ui
	content fyne.CanvasObject
	filter  *widget.Entry
	list    *widget.List
	empty   *emptyState
	add     *widget.Button
	// find and addHere are the empty state's actions.
	find    *widget.Button
	addHere *widget.Button
	// found shows the scan at start (found.go): in big, filling the tab,
	// while there are no folders; in small, above the list, after.
	found *foundPanel
	big   *fyne.Container
	small *fyne.Container

	all   []rootLine // every root, naturally sorted by path
	shown []rootLine // those the filter keeps
	rows  rowWidgets[*rootItem]
	// checking are the roots whose Check again is under way.
	checking map[string]bool
}

// rootLine is what one row shows, computed from a snapshot; comparing two
// says whether the row must be drawn again.
type rootLine struct {
	Root    app.Root
	Health  app.Health
	Branch  string
	Seen    string // "Seen by fs, git", with why not when nobody does
	Nobody  bool
	Search  string // lower-case text the filter looks in
	Enabled bool
	// Recheck offers Check again: the root is on and failed its check,
	// and the app can check it; Checking says that check is under way.
	Recheck  bool
	Checking bool
}

func newRootsTab(u *ui) *rootsTab {
	t := &rootsTab{u: u, checking: map[string]bool{}}
	t.add = widget.NewButtonWithIcon("Add folder…", theme.FolderOpenIcon(), t.pick)
	t.filter = widget.NewEntry()
	t.filter.SetPlaceHolder("Filter by name, path, branch or server")
	t.filter.OnChanged = func(string) { t.apply() }
	t.list = widget.NewList(func() int { return len(t.shown) }, t.newItem, t.updateItem)
	t.empty = newEmptyState()
	t.find = widget.NewButtonWithIcon("Find projects", theme.SearchIcon(), u.findProjects)
	t.find.Importance = widget.HighImportance
	if u.opts.Scan == nil {
		t.find.Disable()
	}
	t.addHere = widget.NewButtonWithIcon("Add folder…", theme.FolderOpenIcon(), t.pick)
	t.found = newFoundPanel(u)
	t.big = container.NewStack()
	t.small = container.NewStack()
	t.big.Hide()
	t.small.Hide()
	intro := widget.NewLabel("Folders servers may be shown. Nothing is shown to a server until you allow it.")
	top := container.NewVBox(container.NewBorder(nil, nil, nil, t.add, intro), t.small, t.filter)
	t.content = container.NewBorder(top, nil, nil, nil, container.NewStack(t.list, t.empty, t.big))
	return t
}

// renderFound shows the scan at start, or takes it away: filling the tab
// while there are no folders, above the list once there are some.
func (t *rootsTab) renderFound() {
	show := t.found.render()
	inBig := show && len(t.all) == 0
	inSmall := show && !inBig
	place := func(slot *fyne.Container, on bool) {
		has := len(slot.Objects) > 0
		switch {
		case on && !has:
			slot.Objects = []fyne.CanvasObject{t.found.content}
			slot.Show()
			slot.Refresh()
		case !on && has:
			slot.Objects = nil
			slot.Hide()
		}
	}
	place(t.big, false) // never in both
	place(t.small, false)
	if inSmall {
		t.found.scroll.SetMinSize(fyne.NewSize(0, min(t.found.groups.MinSize().Height, 220)))
	} else {
		t.found.scroll.SetMinSize(fyne.NewSize(0, 0))
	}
	place(t.big, inBig)
	place(t.small, inSmall)
	// No folders: nothing to filter.
	if len(t.all) == 0 {
		t.filter.Hide()
	} else {
		t.filter.Show()
	}
	t.showEmpty()
}

// render computes the rows of snap and draws what changed.
func (t *rootsTab) render(snap *app.Snapshot, g *app.Grid) {
	lines := make([]rootLine, len(snap.State.Roots))
	for i, r := range snap.State.Roots {
		lines[i] = rootLineOf(snap, g, r)
		lines[i].Recheck = t.u.opts.Health != nil && lines[i].Enabled && failed(lines[i].Health)
		lines[i].Checking = t.checking[r.Path]
	}
	slices.SortFunc(lines, func(a, b rootLine) int { return words.CompareNatural(a.Root.Path, b.Root.Path) })
	t.all = lines
	t.apply()
}

func rootLineOf(snap *app.Snapshot, g *app.Grid, r app.Root) rootLine {
	h := snap.Health[r.Path]
	seen := g.SeenBy(r.Path)
	l := rootLine{Root: r, Health: h, Branch: branchOf(r, h), Enabled: r.Enabled, Nobody: len(seen) == 0}
	l.Seen = "Seen by no server"
	if len(seen) > 0 {
		l.Seen = "Seen by " + listNames(seen, 3)
	}
	switch app.WhyNotSeen(snap, "", r) {
	case app.NotSeenOff:
		l.Seen += " (turned off)"
	case app.NotSeenPaused:
		l.Seen += " (sharing paused)"
	case app.NotSeenHealth:
		l.Seen += " (until its access check passes)"
	}
	l.Search = strings.ToLower(strings.Join([]string{r.Name, r.Path, l.Branch, strings.Join(seen, " ")}, "\x00"))
	return l
}

// failed reports whether h is the result of a check that did not pass
// (not a check still to come).
func failed(h app.Health) bool { return h.Status != app.HealthOK && h.Status != app.HealthUnknown }

// listNames joins names, the first max of them and "n more".
func listNames(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}

// apply filters the rows and redraws what changed (see redrawRows).
func (t *rootsTab) apply() {
	q := strings.ToLower(strings.TrimSpace(t.filter.Text))
	next := make([]rootLine, 0, len(t.all))
	for _, l := range t.all {
		if q == "" || strings.Contains(l.Search, q) {
			next = append(next, l)
		}
	}
	prev := t.shown
	t.shown = next
	redrawRows(t.list, &t.rows, prev, next, t.updateItem)
	t.renderFound()
}

// showEmpty says what to do when the list is empty (and the scan at start
// does not fill the tab).
func (t *rootsTab) showEmpty() {
	switch {
	case len(t.shown) > 0 || len(t.big.Objects) > 0:
		t.empty.Hide()
	case len(t.all) > 0:
		t.empty.show("No folder matches the filter.")
	default:
		t.empty.show("No folders yet.\nRootkeeper can find your projects, or you can pick a folder. Nothing is shared until you allow it.",
			t.find, t.addHere)
	}
}

// rootItem is one row of the Roots list, reused as the list scrolls.
type rootItem struct {
	widget.BaseWidget
	path    string // the root it shows now
	name    *widget.Label
	health  *widget.Label
	branch  *widget.Label
	seen    *widget.Label
	where   *pathLabel
	enabled *widget.Check
	check   *widget.Button
	access  *widget.Button
	remove  *widget.Button
	right   *fyne.Container
	box     fyne.CanvasObject
}

func (t *rootsTab) newItem() fyne.CanvasObject {
	it := &rootItem{
		name:    widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		health:  widget.NewLabel(""),
		branch:  widget.NewLabel(""),
		seen:    widget.NewLabel(""),
		where:   newPathLabel(""),
		enabled: widget.NewCheck("Enabled", nil),
	}
	it.name.Truncation = fyne.TextTruncateEllipsis
	it.seen.Truncation = fyne.TextTruncateEllipsis
	it.check = widget.NewButtonWithIcon("Check again", theme.ViewRefreshIcon(), func() { t.checkAgain(it.path) })
	it.check.Hide()
	it.access = widget.NewButtonWithIcon("Access…", theme.AccountIcon(), func() { t.u.showFolderAccess(it.path) })
	it.remove = widget.NewButtonWithIcon("", theme.DeleteIcon(), func() { t.confirmRemove(it.path) })
	it.enabled.OnChanged = func(on bool) { t.toggle(it, on) }
	// Fixed widths: a reused row's layout does not depend on its text.
	h := it.name.MinSize().Height
	it.health.Truncation = fyne.TextTruncateEllipsis
	it.branch.Truncation = fyne.TextTruncateEllipsis
	it.right = container.NewHBox(container.NewGridWrap(fyne.NewSize(130, h), it.health),
		container.NewGridWrap(fyne.NewSize(170, h), it.branch), it.check, it.enabled, it.access, it.remove)
	head := container.NewBorder(nil, nil, nil, it.right, it.name)
	seen := container.NewGridWrap(fyne.NewSize(340, it.seen.MinSize().Height), it.seen)
	it.box = container.NewVBox(head, container.NewBorder(nil, nil, nil, seen, it.where))
	it.ExtendBaseWidget(it)
	t.rows.created++
	return it
}

// CreateRenderer is part of fyne.Widget.
func (it *rootItem) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(it.box) }

func (t *rootsTab) updateItem(id widget.ListItemID, o fyne.CanvasObject) {
	it, ok := o.(*rootItem)
	if !ok || id >= len(t.shown) {
		return
	}
	l := t.shown[id]
	t.rows.bind(id, it)
	it.path = l.Root.Path
	it.name.SetText(words.SafeText(l.Root.Name))
	badge := healthBadge(l.Health, l.Enabled)
	it.health.Text, it.health.Importance, it.health.TextStyle = badge.Text, badge.Importance, badge.TextStyle
	it.health.Refresh()
	if l.Branch != "" {
		it.branch.SetText("⎇ " + words.SafeText(l.Branch))
		it.branch.Show()
	} else {
		it.branch.Hide()
	}
	switch {
	case !l.Recheck:
		it.check.Hide()
	case l.Checking:
		it.check.SetText("Checking…")
		it.check.Disable()
		it.check.Show()
	default:
		it.check.SetText("Check again")
		it.check.Enable()
		it.check.Show()
	}
	it.seen.TextStyle.Italic = l.Nobody
	it.seen.SetText(l.Seen)
	it.where.setPath(l.Root.Path, t.u.home())
	setCheckedQuietly(it.enabled, l.Enabled)
}

// recheckTimeout bounds a Check again: the app's check ends within its own
// timeout (the folder is unreadable then).
const recheckTimeout = 15 * time.Second

// checkAgain has the running app check the root at path again now (a
// change no watch saw: a folder above it renamed back, a drive
// remounted). The row says it is checking until the answer comes; the
// health itself comes with the app's live view.
func (t *rootsTab) checkAgain(path string) {
	if t.checking[path] || t.u.opts.Health == nil {
		return
	}
	t.checking[path] = true
	t.redraw()
	parent := t.u.opts.Context
	if parent == nil {
		parent = context.Background()
	}
	t.u.async(func() {
		ctx, cancel := context.WithTimeout(parent, recheckTimeout)
		defer cancel()
		_, err := t.u.opts.Health.Check(ctx, path)
		t.u.do(func() {
			delete(t.checking, path)
			if err != nil {
				t.u.showError(fmt.Errorf("check again: %w", err))
			}
			t.redraw()
		})
	})
}

// redraw renders the last snapshot again, for what the tab itself changed.
func (t *rootsTab) redraw() {
	if t.u.snap != nil {
		t.render(t.u.snap, t.u.grid)
	}
}

// toggle is a tick or untick of a row's Enabled: the snapshot decides what
// is shown, so the check goes back until the change comes through.
func (t *rootsTab) toggle(it *rootItem, on bool) {
	path := it.path
	setCheckedQuietly(it.enabled, !on)
	if on {
		t.u.turnOn(path)
	} else {
		t.u.turnOff(path)
	}
}

func branchOf(r app.Root, h app.Health) string {
	if h.Branch != "" {
		return h.Branch
	}
	return r.Branch
}

func (t *rootsTab) confirmRemove(path string) {
	r, ok := t.u.core.Snapshot().State.Root(path)
	if !ok {
		return
	}
	confirmText("Remove "+words.SafeText(r.Name)+"?",
		"Rootkeeper forgets this folder and every decision about it. No server will see it. The folder itself is not touched.",
		"Remove", "Cancel",
		func(ok bool) {
			if ok {
				t.u.update("remove "+r.Name, func(s *app.State) error { return s.RemoveRoot(r.Path) }, nil)
			}
		}, t.u.win).Show()
}

// pick lets the person choose a folder and then asks whom to share it with.
func (t *rootsTab) pick() {
	pickFolder(t.u.win, func(dir fyne.ListableURI, err error) {
		if err != nil {
			t.u.showError(err)
			return
		}
		if dir == nil {
			return
		}
		t.u.shareFolder(dir.Path(), app.SourcePicked, "", "")
	})
}

// shareFolder turns a folder into a root (off the UI goroutine: it resolves
// symlinks) and opens the share dialog for it, or, when it is already a
// root, the same dialog for that root.
func (u *ui) shareFolder(path string, src app.Source, branch, remote string) {
	u.async(func() {
		r, err := app.NewRoot(path, "", src)
		u.do(func() {
			if err != nil {
				u.showError(err)
				return
			}
			snap := u.core.Snapshot()
			if old, ok := snap.State.Root(r.Path); ok {
				u.askShare(old, false, app.TakingServers(snap))
				return
			}
			r.Branch, r.Remote = branch, remote
			u.askShare(r, true, app.TakingServers(snap))
		})
	})
}

// setCheckedQuietly sets c without calling its OnChanged.
func setCheckedQuietly(c *widget.Check, on bool) {
	f := c.OnChanged
	c.OnChanged = nil
	c.SetChecked(on)
	c.OnChanged = f
}
