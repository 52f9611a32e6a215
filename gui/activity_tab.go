package gui

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/audit"
)

const allServers = "All servers"

// activityTab shows the audit log, newest first: which server got which
// roots when. It filters by server and text and exports what it shows.
type activityTab struct {
	u       *ui
	content fyne.CanvasObject

	server *widget.Select
	filter *widget.Entry
	// missing shows the attempts on paths that do not exist, left out
	// unless checked: a confined Node server's start looks for node in
	// each folder of PATH, and such lines were half the tab.
	missing *widget.Check
	export  *widget.Button
	list    *widget.List
	empty   *widget.Label
	status  *widget.Label

	// log reads the audit log, all of it once and then what was added
	// (a full log is 36 MB); only the goroutine of a reload calls it.
	log     *audit.Follower
	entries []auditEntry  // oldest first, shared with log: never changed here
	shown   []*auditEntry // the entries the filters keep, newest first (in entries): what Export writes
	rows    []activityRow
	loading bool
	again   bool        // another reload was asked for while loading
	stamp   audit.Stamp // the version of the log entries holds
	read    bool        // entries holds a read of the log
	readErr string      // why the last read failed, if it did
	// filtering counts the filters begun: a filter's result is shown only
	// if no other began after it.
	filtering atomic.Uint64
}

func newActivityTab(u *ui) *activityTab {
	t := &activityTab{u: u, log: audit.NewFollower(u.opts.StateDir)}
	t.server = widget.NewSelect([]string{allServers}, nil)
	t.server.SetSelected(allServers)
	t.filter = widget.NewEntry()
	t.filter.SetPlaceHolder("Filter by folder, server or error")
	t.filter.OnChanged = func(string) { t.apply() }
	t.missing = widget.NewCheck("Missing paths", func(bool) { t.apply() })
	t.export = widget.NewButtonWithIcon("Export…", theme.DocumentSaveIcon(), t.save)
	refresh := widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), t.reload)
	t.status = widget.NewLabel("")
	t.status.TextStyle.Italic = true
	t.list = widget.NewList(func() int { return len(t.rows) }, newActivityItem, t.updateItem)
	t.empty = hint("")
	top := container.NewBorder(nil, nil, t.server, container.NewHBox(t.missing, refresh, t.export), t.filter)
	t.content = container.NewBorder(top, t.status, nil, nil, container.NewStack(t.list, container.NewCenter(t.empty)))
	t.server.OnChanged = func(string) { t.apply() }
	t.apply()
	return t
}

// render keeps the server choices in step with the configuration and
// reloads the log while the tab is on screen.
func (t *activityTab) render(snap *app.Snapshot) {
	opts := append([]string{allServers}, snap.ServerNames()...)
	if !slices.Equal(opts, t.server.Options) {
		t.server.Options = opts
		if !slices.Contains(opts, t.server.Selected) {
			t.server.SetSelected(allServers)
		}
		t.server.Refresh()
	}
	if t.u.tabs != nil && t.u.tabs.Selected() != nil && t.u.tabs.Selected().Text == "Activity" {
		t.reload()
	}
}

// reload reads the audit log off the UI goroutine, when it changed since
// the last read (status changes come many times a second, the log seldom),
// and then only what was added to it.
func (t *activityTab) reload() {
	if t.loading {
		t.again = true
		return
	}
	t.loading = true
	dir, last, read, log := t.u.opts.StateDir, t.stamp, t.read, t.log
	if !read && len(t.entries) == 0 {
		// A full log takes a third of a second to read the first time:
		// not "no activity" meanwhile.
		t.empty.SetText("Reading the activity log…")
		t.empty.Show()
	}
	t.u.async(func() {
		stamp := audit.StampOf(dir)
		if read && stamp == last {
			t.u.do(func() {
				t.loading = false
				if t.again {
					t.again = false
					t.reload()
				}
			})
			return
		}
		entries, err := readAudit(log)
		t.u.do(func() {
			t.loading = false
			t.stamp, t.read = stamp, err == nil
			if err != nil {
				t.readErr = "Could not read the activity log: " + err.Error()
			} else {
				t.entries, t.readErr = entries, ""
			}
			t.apply()
			if t.again {
				t.again = false
				t.reload()
			}
		})
	})
}

// apply filters the entries into the list, off the UI goroutine: a full
// log is some 200,000 lines, 20 ms to match each keystroke against. Only
// the newest filter's result is shown; one overtaken stops early.
func (t *activityTab) apply() {
	f := activityFilter{server: t.server.Selected, q: filterQuery(t.filter.Text), missing: t.missing.Checked}
	entries := t.entries
	gen := t.filtering.Add(1)
	if len(entries) == 0 {
		t.show(nil, nil, 0)
		return
	}
	t.u.async(func() {
		shown, hidden, ok := f.apply(entries, func() bool { return t.filtering.Load() != gen })
		if !ok {
			return
		}
		rows := foldActivity(make([]activityRow, 0, len(shown)), shown)
		t.u.do(func() {
			if t.filtering.Load() == gen {
				t.show(shown, rows, hidden)
			}
		})
	})
}

// activityFilter is what the tab's filters hold: a server (any for
// allServers), a query (filterQuery) and whether attempts on missing paths
// are shown.
type activityFilter struct {
	server, q string
	missing   bool
}

// apply returns, newest first, what the filter keeps of entries (oldest
// first), and how many more it would keep were attempts on missing paths
// shown; ok is false when overtaken said to stop.
func (f activityFilter) apply(entries []auditEntry, overtaken func() bool) (shown []*auditEntry, hidden int, ok bool) {
	shown = make([]*auditEntry, 0, len(entries)) // one allocation, not twenty
	for i := len(entries) - 1; i >= 0; i-- {
		if i%4096 == 0 && overtaken() {
			return nil, 0, false
		}
		e := &entries[i]
		if f.server != "" && f.server != allServers && e.Server != f.server {
			continue
		}
		if !matches(f.q, e.Server, e.Tried, e.Error, e.Via) && !matches(f.q, e.Roots...) {
			continue
		}
		if e.Absent && !f.missing {
			hidden++
			continue
		}
		shown = append(shown, e)
	}
	return shown, hidden, true
}

// show puts a filter's result on screen: shown, in rows, and hidden
// attempts on missing paths.
func (t *activityTab) show(shown []*auditEntry, rows []activityRow, hidden int) {
	t.shown, t.rows = shown, rows
	switch {
	case t.readErr != "":
		t.status.SetText(t.readErr)
	case hidden > 0:
		t.status.SetText(fmt.Sprintf("%s in the log; %s on missing paths not shown.", plural(len(t.entries), "line"), plural(hidden, "attempt")))
	default:
		t.status.SetText(fmt.Sprintf("%s in the log.", plural(len(t.entries), "line")))
	}
	switch {
	case len(t.shown) > 0:
		t.empty.Hide()
	case len(t.entries) > 0:
		t.empty.SetText("Nothing matches the filter.")
		t.empty.Show()
	default:
		t.empty.SetText("No activity yet.\nEach time a server asks which folders it may see, the answer is logged here.")
		t.empty.Show()
	}
	if len(t.shown) == 0 {
		t.export.Disable()
	} else {
		t.export.Enable()
	}
	t.list.Refresh()
}

// activityItem is one line of the log.
type activityItem struct {
	widget.BaseWidget
	when, server *widget.Label
	what         *pathLabel
	box          fyne.CanvasObject
}

func newActivityItem() fyne.CanvasObject {
	it := &activityItem{
		when:   widget.NewLabel("2006-01-02 15:04:05"),
		server: widget.NewLabelWithStyle("server-name", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		what:   newPathLabel(""),
	}
	it.when.TextStyle.Italic = true
	it.box = container.NewBorder(nil, nil, container.NewHBox(it.when, it.server), nil, it.what)
	it.ExtendBaseWidget(it)
	return it
}

// CreateRenderer is part of fyne.Widget.
func (it *activityItem) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(it.box)
}

func (t *activityTab) updateItem(id widget.ListItemID, o fyne.CanvasObject) {
	it, ok := o.(*activityItem)
	if !ok || id >= len(t.rows) {
		return
	}
	r := t.rows[id]
	e := r.entry()
	it.when.SetText(e.Time.Local().Format("2006-01-02 15:04:05"))
	it.server.SetText(e.Server)
	it.what.Importance = widget.MediumImportance
	it.what.setText(r.text(false), r.text(true))
	if e.Error != "" {
		it.what.Importance = widget.DangerImportance
		it.what.Refresh()
	}
}

// activityText says what one line of the audit trail records, in a line:
// what an answer gave (the folders' names, or with full their paths),
// what a confined server tried and what became of it, a decision on its
// confinement, or how much noise was counted and not written.
func activityText(e auditEntry, full bool) string {
	var s string
	switch {
	case e.Via == audit.ViaSummary:
		return audit.SummaryText(e)
	case e.Via == audit.ViaConfinement:
		return e.Decided + " (by " + e.Op + ")"
	case e.Via == audit.ViaNetwork && audit.IsNetworkDecision(e):
		return "network " + e.Decided + " " + e.Tried + " (by " + e.Op + ")"
	case e.Via == audit.ViaNetwork || e.Via == audit.ViaReach:
		return attemptText(e, full, 1)
	case e.Error != "":
		s = "error: " + e.Error
	case len(e.Roots) == 0:
		s = "got no folders"
	default:
		names := make([]string, len(e.Roots))
		for i, r := range e.Roots {
			if p, err := app.PathFromURI(r); err == nil {
				r = p
				if !full {
					r = filepath.Base(p)
				}
			}
			names[i] = r
		}
		s = "got " + strings.Join(names, ", ")
	}
	if e.Via != "" {
		s += " (" + e.Via + ")"
	}
	if e.ProtocolVersion != "" {
		s += " · " + e.ProtocolVersion
	}
	return s
}

// An activityRow is one line of the tab: an entry of the log, or a run of
// entries that say the same nothing, folded into one. A runtime looking for
// a program along PATH (`#!/usr/bin/env node` tries each folder of PATH in
// turn) or for a file in several places makes a handful of attempts in a
// moment that differ only in the folder, each not asked about: one line a
// start, not six.
type activityRow struct {
	// run is the entries of the line, newest first: a part of the tab's
	// shown entries (a full log is some 180,000 of them, and every reload
	// and keystroke in the filter makes the rows again), and times how
	// many attempts it stands for (an entry may stand for several,
	// Repeated).
	run   []*auditEntry
	times int
}

// entry is the newest entry of the row.
func (r activityRow) entry() *auditEntry { return r.run[0] }

// foldWindow is how far apart two attempts of a run may be.
const foldWindow = 2 * time.Second

// foldActivity appends to rows the entries (newest first), each run of
// alike attempts in one row: attempts of one server that became nothing
// (not asked, rate-limited), raised no request, and tried the same
// operation on the same name, each within foldWindow of the next. What
// the person decided, what a server was told and whatever raised a request
// each keep a line of their own.
func foldActivity(rows []activityRow, entries []*auditEntry) []activityRow {
	for i, e := range entries {
		n := max(e.Repeated, 1)
		if len(rows) > 0 {
			last := &rows[len(rows)-1]
			newest, older := last.entry(), last.run[len(last.run)-1]
			if foldable(newest) && foldable(e) && alike(newest, e) && older.Time.Sub(e.Time) <= foldWindow {
				last.run = entries[i-len(last.run) : i+1] // runs are of entries one after another
				last.times += n
				continue
			}
		}
		rows = append(rows, activityRow{run: entries[i : i+1], times: n})
	}
	return rows
}

// foldable reports whether e is an attempt that became nothing.
func foldable(e *auditEntry) bool {
	return (e.Via == audit.ViaReach || e.Via == audit.ViaNetwork) && !e.Request &&
		(e.Decided == audit.ReachIgnored || e.Decided == audit.ReachLimited)
}

// alike reports whether attempts a and b differ at most in the folder of
// what they tried.
func alike(a, b *auditEntry) bool {
	return a.Server == b.Server && a.Via == b.Via && a.Op == b.Op && a.Decided == b.Decided && a.Absent == b.Absent &&
		filepath.Base(a.Tried) == filepath.Base(b.Tried)
}

// attemptText is the line of a confined server's attempt e, standing for
// times attempts: what it tried (a path's name, or with full the whole
// path; a network destination whole) and what became of it.
func attemptText(e auditEntry, full bool, times int) string {
	tried := e.Tried
	if e.Via == audit.ViaReach && !full {
		tried = filepath.Base(tried)
	}
	s := "tried to " + app.OpText(e.Op) + " " + tried
	if times > 1 {
		s += " " + plural(times, "time")
	}
	if e.Absent && e.Decided == audit.ReachIgnored {
		return s + ": not there"
	}
	s += ": " + e.Decided
	if e.Request {
		s += " (raised a request)"
	}
	return s
}

// text is what the row says: its entry's line, with how many attempts it
// stands for and, in full, the other paths a folded run tried.
func (r activityRow) text(full bool) string {
	e := *r.entry()
	if (e.Via != audit.ViaReach && e.Via != audit.ViaNetwork) || audit.IsNetworkDecision(e) {
		return activityText(e, full)
	}
	s := attemptText(e, full, r.times)
	if !full {
		return s
	}
	var paths []string
	for _, e := range r.run {
		if !slices.Contains(paths, e.Tried) {
			paths = append(paths, e.Tried)
		}
	}
	if len(paths) < 2 {
		return s // its one path is in the line already
	}
	return s + " (" + strings.Join(paths, ", ") + ")"
}

// save writes the entries on screen as JSON lines to a file the person picks.
func (t *activityTab) save() {
	entries := slices.Clone(t.shown)
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil {
			t.u.showError(err)
			return
		}
		if w == nil {
			return
		}
		t.u.async(func() {
			err := writeEntries(w, entries)
			t.u.do(func() {
				if err != nil {
					t.u.showError(fmt.Errorf("export: %w", err))
					return
				}
				t.status.SetText(fmt.Sprintf("Exported %s to %s.", plural(len(entries), "line"), w.URI().Path()))
			})
		})
	}, t.u.win)
	d.SetFileName("rootkeeper-activity-" + time.Now().Format("2006-01-02") + ".jsonl")
	d.SetFilter(storage.NewExtensionFileFilter([]string{".jsonl", ".json"}))
	d.Show()
}

func writeEntries(w fyne.URIWriteCloser, entries []*auditEntry) error {
	enc := json.NewEncoder(w)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}
