package gui

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// discoverTab edits the search folders, runs a scan with progress and lists
// the candidates grouped by repository, each with Share….
type discoverTab struct {
	u       *ui
	content fyne.CanvasObject

	folders   *fyne.Container
	newFolder *widget.Entry
	scanBtn   *widget.Button
	cancelBtn *widget.Button
	// progressBox holds the scan's progress bar while a scan runs, and
	// nothing otherwise: a Fyne infinite progress bar starts animating
	// when its renderer is made, hidden and stopped or not, and would
	// redraw the window 60 times a second for as long as the app runs.
	progressBox *fyne.Container
	progress    *widget.ProgressBarInfinite // nil when no scan runs
	status      *widget.Label
	filter      *widget.Entry
	list        *widget.List
	empty       *emptyState
	scanNow     *widget.Button // the empty state's action

	cands    []app.Candidate // everything found by the last scan
	rows     []candRow       // what the list shows: grouped and filtered
	scanning bool
	cancel   context.CancelFunc
	gen      int // counts scans, so a finished scan's late flushes are dropped
	snap     *app.Snapshot
	// last is the scan's latest progress report.
	last app.ScanProgress
	// onScan is told whenever the scan started, found something, made
	// progress or ended (the Roots tab shows the scan at start); onDone
	// when it ended, with its error. Both run on the UI goroutine; never nil.
	onScan func()
	onDone func(error)
}

// candRow is one line of the candidate list.
type candRow struct {
	C     app.Candidate
	Depth int // 0 for a repository or a lone project, 1 inside a repository
}

func newDiscoverTab(u *ui) *discoverTab {
	t := &discoverTab{u: u, onScan: func() {}, onDone: func(error) {}}
	t.folders = container.NewVBox()
	t.newFolder = widget.NewEntry()
	t.newFolder.SetPlaceHolder("Add a search folder: type a path or Browse…")
	t.newFolder.OnSubmitted = func(string) { t.addFolder(t.newFolder.Text) }
	addBtn := widget.NewButtonWithIcon("Add", theme.ContentAddIcon(), func() { t.addFolder(t.newFolder.Text) })
	browse := widget.NewButtonWithIcon("Browse…", theme.FolderOpenIcon(), t.browse)
	addRow := container.NewBorder(nil, nil, nil, container.NewHBox(addBtn, browse), t.newFolder)

	t.scanBtn = widget.NewButtonWithIcon("Scan", theme.SearchIcon(), t.scan)
	t.scanBtn.Importance = widget.HighImportance
	t.cancelBtn = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), t.stop)
	t.cancelBtn.Disable()
	t.progressBox = container.NewStack()
	t.progressBox.Hide()
	t.status = widget.NewLabel("")
	t.status.Truncation = fyne.TextTruncateEllipsis
	if u.opts.Scan == nil {
		t.scanBtn.Disable()
		t.status.SetText("Scanning is not available in this build.")
	} else {
		t.status.SetText("Press Scan to look for git repositories and projects in the search folders.")
	}
	scanRow := container.NewBorder(nil, nil, container.NewHBox(t.scanBtn, t.cancelBtn), nil,
		container.NewVBox(t.progressBox, t.status))

	t.filter = widget.NewEntry()
	t.filter.SetPlaceHolder("Filter by name, path, branch or remote")
	t.filter.OnChanged = func(string) { t.regroup() }

	t.list = widget.NewList(func() int { return len(t.rows) }, t.newItem, t.updateItem)
	t.empty = newEmptyState()
	t.scanNow = widget.NewButtonWithIcon("Scan now", theme.SearchIcon(), t.scan)
	t.scanNow.Importance = widget.HighImportance
	searchBox := container.NewVBox(
		widget.NewLabelWithStyle("Search folders", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		t.folders, addRow, widget.NewSeparator(), scanRow, t.filter)
	t.content = container.NewBorder(searchBox, nil, nil, nil, container.NewStack(t.list, t.empty))
	t.updateEmpty()
	return t
}

// render follows the search folders and the roots ("Added" marks); a
// snapshot that changed neither (a status, a health check) touches
// nothing.
func (t *discoverTab) render(snap *app.Snapshot) {
	prev := t.snap
	t.snap = snap
	if prev != nil && slices.Equal(prev.State.SearchFolders, snap.State.SearchFolders) &&
		sameRoots(prev.State.Roots, snap.State.Roots) {
		return
	}
	t.folders.Objects = nil
	if len(snap.State.SearchFolders) == 0 {
		l := widget.NewLabel("None set: Scan looks in the usual places in your home folder. Add folders to choose.")
		l.TextStyle.Italic = true
		l.Wrapping = fyne.TextWrapWord
		t.folders.Add(l)
	}
	for _, dir := range snap.State.SearchFolders {
		dir := dir
		rm := widget.NewButtonWithIcon("", theme.DeleteIcon(), func() { t.removeFolder(dir) })
		where := newPathLabel("")
		where.setPath(dir, t.u.home())
		t.folders.Add(container.NewBorder(nil, nil, widget.NewIcon(theme.FolderIcon()), rm, where))
	}
	t.folders.Refresh()
	t.list.Refresh() // "Added" marks follow the roots
}

func (t *discoverTab) addFolder(dir string) {
	dir = strings.TrimSpace(dir)
	if dir == "" {
		return
	}
	if !filepath.IsAbs(dir) {
		t.u.showError(fmt.Errorf("%q is not an absolute path", dir))
		return
	}
	dir = filepath.Clean(dir)
	t.newFolder.SetText("")
	t.u.update("add search folder "+dir, func(s *app.State) error {
		if !slices.Contains(s.SearchFolders, dir) {
			s.SearchFolders = append(s.SearchFolders, dir)
		}
		return nil
	}, nil)
}

func (t *discoverTab) removeFolder(dir string) {
	t.u.update("remove search folder "+dir, func(s *app.State) error {
		s.SearchFolders = slices.DeleteFunc(s.SearchFolders, func(d string) bool { return d == dir })
		return nil
	}, nil)
}

func (t *discoverTab) browse() {
	pickFolder(t.u.win, func(dir fyne.ListableURI, err error) {
		if err != nil {
			t.u.showError(err)
			return
		}
		if dir != nil {
			t.addFolder(dir.Path())
		}
	})
}

// scanBuffer collects what the scanner reports from its goroutines until
// the UI goroutine takes it, and says when a flush is due (a few per second).
type scanBuffer struct {
	mu        sync.Mutex
	found     []app.Candidate
	progress  app.ScanProgress
	lastFlush time.Time
	pending   bool // a flush is scheduled and has not run yet
}

// due reports whether the caller should schedule a flush.
func (b *scanBuffer) due() bool {
	if b.pending || time.Since(b.lastFlush) < 150*time.Millisecond {
		return false
	}
	b.pending = true
	return true
}

func (b *scanBuffer) add(c app.Candidate) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.found = append(b.found, c)
	return b.due()
}

func (b *scanBuffer) report(p app.ScanProgress) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.progress = p
	return b.due()
}

func (b *scanBuffer) take() ([]app.Candidate, app.ScanProgress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	found := b.found
	b.found = nil
	b.pending = false
	b.lastFlush = time.Now()
	return found, b.progress
}

// scan runs the scanner in the background; results and progress come back
// through u.do a few times per second.
func (t *discoverTab) scan() {
	scanner := t.u.opts.Scan
	if scanner == nil || t.scanning {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	t.scanning = true
	t.gen++
	gen := t.gen
	t.cands = nil
	t.regroup()
	t.scanBtn.Disable()
	t.cancelBtn.Enable()
	t.progress = widget.NewProgressBarInfinite()
	t.progressBox.Objects = []fyne.CanvasObject{t.progress}
	t.progressBox.Show()
	t.progressBox.Refresh()
	t.status.SetText("Starting…")
	t.last = app.ScanProgress{}
	t.onScan()
	var dirs []string
	if t.snap != nil {
		dirs = slices.Clone(t.snap.State.SearchFolders)
	}
	buf := &scanBuffer{}
	flush := func() { t.u.do(func() { t.flush(gen, buf) }) }
	t.u.async(func() {
		sum, err := scanner(ctx, app.ScanRequest{Dirs: dirs},
			func(c app.Candidate) {
				if buf.add(c) {
					flush()
				}
			},
			func(p app.ScanProgress) {
				if buf.report(p) {
					flush()
				}
			})
		cancel()
		t.u.do(func() {
			t.flush(gen, buf)
			t.finish(gen, sum, err)
		})
	})
}

func (t *discoverTab) flush(gen int, buf *scanBuffer) {
	if gen != t.gen {
		return
	}
	found, p := buf.take()
	if len(found) > 0 {
		t.cands = append(t.cands, found...)
		t.regroup()
	}
	if t.scanning {
		t.last = p
		t.status.SetText(fmt.Sprintf("%d folders visited · %d found · %s", p.Visited, len(t.cands), p.Current))
	}
	t.onScan()
}

func (t *discoverTab) finish(gen int, sum app.ScanSummary, err error) {
	if gen != t.gen {
		return
	}
	t.scanning = false
	t.cancel = nil
	t.scanBtn.Enable()
	t.cancelBtn.Disable()
	t.progress.Stop()
	t.progress = nil
	t.progressBox.Objects = nil
	t.progressBox.Hide()
	msg := fmt.Sprintf("Done: %d folders visited, %d found.", sum.Visited, len(t.cands))
	switch {
	case errors.Is(err, context.Canceled):
		msg = fmt.Sprintf("Cancelled after %d folders; %d found so far.", sum.Visited, len(t.cands))
	case err != nil:
		msg = "Scan failed: " + err.Error()
	}
	if n := len(sum.Unreadable); n > 0 {
		msg += fmt.Sprintf(" %s could not be read.", plural(n, "folder"))
	}
	t.status.SetText(msg)
	t.updateEmpty()
	t.last.Visited = sum.Visited
	t.onScan()
	t.onDone(err)
}

func (t *discoverTab) stop() {
	if t.cancel != nil {
		t.cancel()
		t.status.SetText("Cancelling…")
	}
}

// regroup rebuilds the list's rows from the candidates and the filter.
func (t *discoverTab) regroup() {
	t.rows = groupCandidates(t.cands, t.filter.Text)
	t.list.Refresh()
	t.updateEmpty()
}

func (t *discoverTab) updateEmpty() {
	switch {
	case len(t.rows) > 0:
		t.empty.Hide()
		return
	case len(t.cands) > 0:
		t.empty.show("Nothing matches the filter.")
	case t.scanning:
		t.empty.show("Looking…")
	case t.u.opts.Scan == nil:
		t.empty.show("Scanning is not available.\nAdd folders by hand with Add folder… in Roots.")
	default:
		t.empty.show("No projects listed yet.\nScan finds git repositories and project folders in the search folders.", t.scanNow)
	}
}

// groupCandidates orders candidates by repository: each repository (or lone
// project) at depth 0, followed by the candidates inside it at depth 1. With
// a filter, a group stays when its head or any member matches; members that
// do not match are left out.
func groupCandidates(cands []app.Candidate, filter string) []candRow {
	filter = filterQuery(filter)
	isHead := map[string]bool{}
	for _, c := range cands {
		if c.Repo == "" || c.Repo == c.Path {
			isHead[c.Path] = true
		}
	}
	members := map[string][]app.Candidate{}
	var heads []app.Candidate
	for _, c := range cands {
		if c.Repo != "" && c.Repo != c.Path && isHead[c.Repo] {
			members[c.Repo] = append(members[c.Repo], c)
		} else {
			heads = append(heads, c)
		}
	}
	byPath := func(a, b app.Candidate) int { return words.CompareNatural(a.Path, b.Path) }
	slices.SortFunc(heads, byPath)
	var rows []candRow
	for _, h := range heads {
		ms := members[h.Path]
		slices.SortFunc(ms, byPath)
		headOK := candidateMatches(h, filter)
		var keep []candRow
		for _, m := range ms {
			if candidateMatches(m, filter) {
				keep = append(keep, candRow{C: m, Depth: 1})
			}
		}
		if headOK || len(keep) > 0 {
			rows = append(rows, candRow{C: h})
			rows = append(rows, keep...)
		}
	}
	return rows
}

// candidateMatches reports whether the filter query (filterQuery) is
// found in c's path, branch, remote or markers.
func candidateMatches(c app.Candidate, filter string) bool {
	return matches(filter, c.Path, c.Branch, c.Remote) || matches(filter, c.Markers...)
}

// candItem is one line of the candidate list, reused as the list scrolls.
type candItem struct {
	widget.BaseWidget
	indent *canvas.Rectangle
	icon   *widget.Icon
	name   *widget.Label
	path   *pathLabel
	detail *widget.Label
	added  *widget.Label
	share  *widget.Button
	box    fyne.CanvasObject
}

func (t *discoverTab) newItem() fyne.CanvasObject {
	it := &candItem{
		indent: canvas.NewRectangle(color.Transparent),
		icon:   widget.NewIcon(theme.FolderIcon()),
		name:   widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		path:   newPathLabel(""),
		detail: widget.NewLabel(""),
		added:  widget.NewLabel("Added"),
		share:  widget.NewButtonWithIcon("Share…", theme.MailSendIcon(), nil),
	}
	it.added.Importance = widget.SuccessImportance
	it.detail.TextStyle.Italic = true
	it.name.Truncation = fyne.TextTruncateEllipsis
	left := container.NewHBox(it.indent, it.icon)
	right := container.NewHBox(it.detail, it.added, container.NewCenter(it.share))
	it.box = container.NewBorder(nil, nil, left, right, container.NewVBox(it.name, it.path))
	it.ExtendBaseWidget(it)
	return it
}

// CreateRenderer is part of fyne.Widget.
func (it *candItem) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(it.box) }

func (t *discoverTab) updateItem(id widget.ListItemID, o fyne.CanvasObject) {
	it, ok := o.(*candItem)
	if !ok || id >= len(t.rows) {
		return
	}
	row := t.rows[id]
	c := row.C
	it.indent.SetMinSize(fyne.NewSize(float32(row.Depth)*3*theme.Padding(), 1))
	if c.Kind == "repo" {
		it.icon.SetResource(theme.StorageIcon())
	} else {
		it.icon.SetResource(theme.FolderIcon())
	}
	it.name.SetText(filepath.Base(c.Path))
	it.path.setPath(c.Path, t.u.home())
	it.detail.SetText(candDetail(c))
	added := t.snap != nil
	if added {
		_, added = t.snap.State.Root(c.Path)
	}
	if added {
		it.added.Show()
	} else {
		it.added.Hide()
	}
	src := app.SourceMarker
	if c.Kind == "repo" {
		src = app.SourceGit
	}
	it.share.OnTapped = func() { t.u.shareFolder(c.Path, src, c.Branch, c.Remote) }
	it.Refresh()
}

// candDetail is a candidate's kind, branch and markers in a few words.
func candDetail(c app.Candidate) string {
	var parts []string
	switch {
	case c.Worktree:
		parts = append(parts, "worktree")
	case c.Submodule:
		parts = append(parts, "submodule")
	case c.Bare:
		parts = append(parts, "bare repo")
	case c.Kind == "repo":
		parts = append(parts, "git")
	}
	if c.Branch != "" {
		parts = append(parts, c.Branch)
	}
	if len(c.Markers) > 0 {
		parts = append(parts, strings.Join(c.Markers, ", "))
	}
	return strings.Join(parts, " · ")
}

// sameRoots reports whether a and b list the same root paths.
func sameRoots(a, b []app.Root) bool {
	return slices.EqualFunc(a, b, func(x, y app.Root) bool { return x.Path == y.Path })
}
