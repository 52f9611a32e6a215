package gui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// Finding projects without a click. When the window opens, the Discover
// tab's scan runs in the background (startFinding). On the first launch (no
// scan at start ever finished in this state folder, and no folders yet)
// the Roots tab shows it: progress, Cancel, and what it finds as it
// finds it, grouped by the folder that holds it, with one button to add
// them. On later launches it runs quietly and the Roots tab mentions only
// projects no earlier start found (app.Offerable). Adding is not sharing:
// the folders are added for nobody, and each server asks first.
//
//	startFinding ─async─> app.LoadSeenProjects ─do─> discover.scan()
//	discover.onScan ──> showFinding: Roots tab, tray line  (progress, found)
//	discover.onDone ──> finishFinding ─async─> app.SaveSeenProjects

// findMode says how the Roots tab shows the scan.
type findMode int

const (
	findOff   findMode = iota // a scan run from Discover: Roots shows nothing
	findLoud                  // first launch or Find projects: progress and everything found
	findQuiet                 // a later launch: only new projects, once the scan is done
)

// finder is the state of the scan the Roots tab shows.
type finder struct {
	mode findMode
	// seen are the projects earlier starts found; known says the file
	// existed. A quiet scan with no record offers nothing and records
	// what it finds, so that people who used Rootkeeper before are not
	// offered every project at once.
	seen  map[string]bool
	known bool
	done  bool  // the scan ended
	err   error // how it ended
	// closed: the person answered the panel (added, or Not now).
	closed bool
	// added is how many folders the last "Add these" added, for the
	// line that says so.
	added int
	// saveErr says why what was found could not be remembered (the next
	// start then offers it all again).
	saveErr error
}

// startFinding starts the background scan at start. Call once, when the
// window is up.
func (u *ui) startFinding() {
	if u.opts.Scan == nil {
		return
	}
	dir := u.core.Store().Dir()
	u.async(func() {
		seen, known := app.LoadSeenProjects(dir)
		u.do(func() {
			mode := findQuiet
			if !known && len(u.core.Snapshot().State.Roots) == 0 {
				mode = findLoud
			}
			u.find = &finder{mode: mode, seen: seen, known: known}
			u.discover.scan()
			u.showFinding()
		})
	})
}

// findProjects is the Find projects button: a scan shown in the Roots tab
// with everything it finds that is not a folder yet.
func (u *ui) findProjects() {
	if u.opts.Scan == nil {
		return
	}
	old := u.find
	u.find = &finder{mode: findLoud}
	if old != nil {
		u.find.seen, u.find.known = old.seen, old.known
	}
	if !u.discover.scanning {
		u.discover.scan()
	}
	u.showFinding()
}

// finishFinding records what a scan at start found, off the UI goroutine.
// A cancelled or failed scan records nothing: the next start looks again.
func (u *ui) finishFinding(err error) {
	f := u.find
	if f == nil || f.mode == findOff {
		return
	}
	f.done, f.err = true, err
	if err == nil {
		paths := make([]string, 0, len(f.seen)+len(u.discover.cands))
		for p := range f.seen {
			paths = append(paths, p)
		}
		for _, c := range u.discover.cands {
			paths = append(paths, c.Path)
		}
		dir := u.core.Store().Dir()
		u.async(func() {
			if err := app.SaveSeenProjects(dir, paths, time.Now()); err != nil {
				u.do(func() { f.saveErr = err; u.showFinding() })
			}
		})
	}
	u.showFinding()
}

// offer is what the panel offers now: everything found that is not a
// folder yet (loud), or, once done, what no earlier start found (quiet).
func (u *ui) offer() []app.Candidate {
	f := u.find
	if f == nil || f.closed || u.snap == nil {
		return nil
	}
	switch f.mode {
	case findLoud:
		return app.Offerable(&u.snap.State, u.discover.cands, nil, u.home())
	case findQuiet:
		if !f.done || f.err != nil || !f.known {
			return nil
		}
		return app.Offerable(&u.snap.State, u.discover.cands, f.seen, u.home())
	}
	return nil
}

// foundPanel shows the scan at start in the Roots tab: what it does, what
// it found by folder, each ticked, and "Add these N folders".
type foundPanel struct {
	u        *ui
	content  *fyne.Container
	title    *widget.Label
	status   *widget.Label
	progress *fyne.Container // the progress bar while scanning (see discoverTab.progressBox)
	bar      *widget.ProgressBarInfinite
	cancel   *widget.Button
	groups   *fyne.Container
	scroll   *container.Scroll
	add      *widget.Button
	later    *widget.Button
	note     *widget.Label

	offer    []app.Candidate
	unticked map[string]bool
	checks   map[string]*widget.Check
}

func newFoundPanel(u *ui) *foundPanel {
	p := &foundPanel{u: u, unticked: map[string]bool{}, checks: map[string]*widget.Check{}}
	p.title = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	p.status = widget.NewLabel("")
	p.status.Truncation = fyne.TextTruncateEllipsis
	p.progress = container.NewStack()
	p.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() { u.discover.stop() })
	p.groups = container.NewVBox()
	p.scroll = container.NewVScroll(p.groups)
	p.add = widget.NewButtonWithIcon("", theme.ContentAddIcon(), p.addTicked)
	p.add.Importance = widget.HighImportance
	p.later = widget.NewButton("Not now", func() {
		if u.find != nil {
			u.find.closed = true
		}
		u.showFinding()
	})
	p.note = widget.NewLabel("Adding a folder shares it with no server: each server asks you before it sees it.")
	p.note.TextStyle.Italic = true
	p.note.Truncation = fyne.TextTruncateEllipsis
	head := container.NewVBox(p.title, container.NewBorder(nil, nil, nil, p.cancel, container.NewVBox(p.progress, p.status)))
	foot := container.NewVBox(container.NewHBox(p.add, p.later), p.note)
	p.content = container.NewBorder(head, foot, nil, nil, p.scroll)
	return p
}

// render shows the scan and the offer; it reports whether the panel has
// anything to show.
func (p *foundPanel) render() bool {
	u, f, d := p.u, p.u.find, p.u.discover
	if f == nil || f.mode == findOff || f.closed {
		p.stopBar()
		return false
	}
	offer := u.offer()
	scanning := d.scanning
	if f.mode == findQuiet && len(offer) == 0 {
		p.stopBar()
		return false
	}
	if scanning {
		if p.bar == nil {
			p.bar = widget.NewProgressBarInfinite()
			p.progress.Objects = []fyne.CanvasObject{p.bar}
			p.progress.Refresh()
		}
		p.cancel.Show()
		where := u.searchWhere()
		current := ""
		if d.last.Current != "" {
			current = " · " + words.CutMiddle(words.HomeShort(d.last.Current, u.home()), 48)
		}
		p.title.SetText("Looking for your projects…")
		read := ""
		if d.last.Visited > 0 {
			read = plural(d.last.Visited, "folder") + " read, "
		}
		p.status.SetText(words.SafeText(fmt.Sprintf("In %s: %s%d found%s", where, read, len(offer), current)))
	} else {
		p.stopBar()
		p.cancel.Hide()
		switch {
		case f.mode == findQuiet:
			p.title.SetText(fmt.Sprintf("%s since Rootkeeper last looked", plural(len(offer), "new project")))
		case len(offer) == 0 && f.added > 0:
			p.title.SetText(fmt.Sprintf("Added %s. None of them is shared with any server yet.", plural(f.added, "folder")))
		case len(offer) == 0:
			p.title.SetText("No new projects found.")
		default:
			p.title.SetText(fmt.Sprintf("Found %s", plural(len(offer), "project")))
		}
		where := u.searchWhere()
		switch {
		case errors.Is(f.err, context.Canceled):
			p.status.SetText(fmt.Sprintf("Cancelled after %s; this is what was found until then.", plural(d.last.Visited, "folder")))
		case f.err != nil:
			p.status.SetText(words.SafeText("The scan stopped: " + f.err.Error()))
		default:
			p.status.SetText(fmt.Sprintf("Looked through %s in %s.", plural(d.last.Visited, "folder"), where))
		}
		if f.saveErr != nil {
			p.status.SetText(p.status.Text + words.SafeText(" Could not remember them for the next start: "+f.saveErr.Error()))
		}
	}
	p.setOffer(offer)
	return true
}

func (p *foundPanel) stopBar() {
	if p.bar != nil {
		p.bar.Stop()
		p.bar = nil
		p.progress.Objects = nil
		p.progress.Refresh()
	}
}

// setOffer draws the candidates by folder, when they changed.
func (p *foundPanel) setOffer(offer []app.Candidate) {
	same := slices.EqualFunc(offer, p.offer, func(a, b app.Candidate) bool { return a.Path == b.Path })
	p.offer = offer
	if !same {
		home := p.u.home()
		p.groups.Objects = nil
		checks := map[string]*widget.Check{}
		for _, g := range app.GroupByParent(offer) {
			where := newPathLabel("")
			where.TextStyle.Bold = true
			where.setPath(g.Parent, home)
			p.groups.Add(where)
			for _, c := range g.Candidates {
				c := c
				check := widget.NewCheck(words.SafeText(filepath.Base(c.Path)), func(on bool) {
					if on {
						delete(p.unticked, c.Path)
					} else {
						p.unticked[c.Path] = true
					}
					p.sayAdd()
				})
				check.Checked = !p.unticked[c.Path]
				checks[c.Path] = check
				detail := widget.NewLabel(candDetail(c))
				detail.TextStyle.Italic = true
				detail.Truncation = fyne.TextTruncateEllipsis
				inset := widget.NewLabel("")
				p.groups.Add(container.NewBorder(nil, nil, container.NewHBox(inset, check), nil, detail))
			}
		}
		p.checks = checks
		p.groups.Refresh()
	}
	p.sayAdd()
}

// ticked are the offered candidates still ticked.
func (p *foundPanel) ticked() []app.Candidate {
	var out []app.Candidate
	for _, c := range p.offer {
		if !p.unticked[c.Path] {
			out = append(out, c)
		}
	}
	return out
}

func (p *foundPanel) sayAdd() {
	n := len(p.ticked())
	switch n {
	case 0:
		p.add.SetText("Add these folders")
		p.add.Disable()
	case 1:
		p.add.SetText("Add this folder")
		p.add.Enable()
	default:
		p.add.SetText(fmt.Sprintf("Add these %d folders", n))
		p.add.Enable()
	}
	if len(p.offer) == 0 {
		p.add.Hide()
		p.later.SetText("Close")
	} else {
		p.add.Show()
		p.later.SetText("Not now")
	}
}

// addTicked adds the ticked candidates as folders, for nobody: it
// resolves each (symlinks, off the UI goroutine) and adds them in one
// update.
func (p *foundPanel) addTicked() {
	u := p.u
	cands := p.ticked()
	if len(cands) == 0 {
		return
	}
	p.add.Disable()
	u.async(func() {
		roots := make([]app.Root, 0, len(cands))
		for _, c := range cands {
			r, err := app.NewRoot(c.Path, "", app.SourceOf(c))
			if err != nil {
				continue // gone since the scan
			}
			r.Branch, r.Remote = c.Branch, c.Remote
			roots = append(roots, r)
		}
		added := 0
		u.do(func() {
			u.update(fmt.Sprintf("add %s", plural(len(roots), "folder")), func(s *app.State) error {
				added = s.AddFound(roots)
				return nil
			}, func(err error) {
				if u.find != nil && err == nil {
					u.find.added += added
				}
				u.showFinding()
			})
		})
	})
}

// showFinding draws the scan in the Roots tab, and in the tray when its
// line there changed.
func (u *ui) showFinding() {
	u.roots.renderFound()
	if line := u.findingLine(); line != u.finding && u.snap != nil {
		u.finding = line
		u.onRefresh(u.snap)
	}
}

// findingLine is the tray's line about the scan at start: while a first
// launch looks, and once it found something to offer. It changes a few
// times per scan, not with every folder read, so that the tray menu is
// not rebuilt for each.
func (u *ui) findingLine() string {
	f := u.find
	if f == nil || f.mode == findOff || f.closed {
		return ""
	}
	if u.discover.scanning {
		if f.mode == findLoud {
			return "Looking for your projects…"
		}
		return ""
	}
	n := len(u.roots.found.offer)
	switch {
	case n == 0:
		return ""
	case f.mode == findQuiet:
		return plural(n, "new project") + " found: add them…"
	default:
		return plural(n, "project") + " found: add them…"
	}
}

// searchWhere says where scans look, for the panel's lines.
func (u *ui) searchWhere() string {
	if u.snap != nil && len(u.snap.State.SearchFolders) > 0 {
		return "your search folders"
	}
	return "the usual places in your home folder"
}
