package gui

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"rootkeeper/app"
	"rootkeeper/app/words"
)

// projectsHome is a home folder with projects in two places, for the scan
// at start.
func projectsHome(t *testing.T) (home string, cands []app.Candidate) {
	home = t.TempDir()
	for _, rel := range []string{"src/api", "src/web", "src/web/frontend", "Documents/thesis"} {
		if err := os.MkdirAll(filepath.Join(home, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	j := func(rel string) string { return filepath.Join(home, rel) }
	cands = []app.Candidate{
		{Path: j("src/api"), Kind: "repo", Repo: j("src/api"), Branch: "main"},
		{Path: j("src/web"), Kind: "repo", Repo: j("src/web")},
		{Path: j("src/web/frontend"), Kind: "project", Repo: j("src/web"), Markers: []string{"package.json"}},
		{Path: j("Documents/thesis"), Kind: "project", Markers: []string{"Makefile"}},
	}
	return home, cands
}

// The first launch finds the projects without a click: the scan starts by
// itself, the Roots tab shows it as it goes and then what it found by
// folder, and one button adds them, for nobody. A later launch mentions
// only what is new.
func TestFirstLaunchFindsProjects(t *testing.T) {
	home, cands := projectsHome(t)
	scans := 0
	var f *fixture
	var during string
	var onScreen int
	scan := func(ctx context.Context, req app.ScanRequest, found func(app.Candidate), progress func(app.ScanProgress)) (app.ScanSummary, error) {
		scans++
		if len(req.Dirs) != 0 {
			t.Errorf("scan of %q, want the default folders", req.Dirs)
		}
		found(cands[0]) // the first flush: the Roots tab shows it at once
		during = f.u.roots.found.title.Text + " | " + f.u.roots.found.status.Text
		onScreen = len(f.u.roots.small.Objects) + len(f.u.roots.big.Objects)
		for _, c := range cands[1:] {
			found(c)
		}
		return app.ScanSummary{Visited: 9, Found: len(cands)}, nil
	}
	f = newFixture(t, Options{Scan: scan, Home: home}, nil)
	roots := f.u.roots
	if roots.found.content.Visible() && len(roots.big.Objects) > 0 {
		t.Fatal("the panel shows before any scan")
	}

	var said []string // the tray's line each time the window told it
	f.u.onRefresh = func(*app.Snapshot) {
		if line := f.u.findingLine(); len(said) == 0 || said[len(said)-1] != line {
			said = append(said, line)
		}
	}
	f.u.startFinding()
	if want := []string{"Looking for your projects…", "3 projects found: add them…"}; !slices.Equal(said, want) {
		t.Errorf("the tray was told %q, want %q (once each)", said, want)
	}
	tr := &tray{opts: TrayOptions{Core: f.core, Finding: func() string { return said[len(said)-1] }}}
	if menu := menuText(trayMenuFor(f.core.Snapshot(), tr.actions())); !strings.Contains(menu, "3 projects found: add them…") {
		t.Errorf("tray menu:\n%s", menu)
	}
	if scans != 1 {
		t.Fatalf("%d scans at start, want 1", scans)
	}
	if want := "Looking for your projects… | In the usual places in your home folder: 1 found"; during != want {
		t.Errorf("during the scan the panel said\n %q\nwant\n %q", during, want)
	}
	if onScreen != 1 {
		t.Error("the scan at first launch is not on screen while it runs")
	}
	if len(roots.big.Objects) == 0 || !roots.big.Visible() || roots.empty.Visible() {
		t.Fatal("with no folders yet, the found projects do not fill the Roots tab")
	}
	f.capture("first-launch.png")
	p := roots.found
	if got := p.title.Text; got != "Found 3 projects" {
		t.Errorf("title %q", got)
	}
	var groups []string
	for _, g := range app.GroupByParent(p.offer) {
		var names []string
		for _, c := range g.Candidates {
			names = append(names, filepath.Base(c.Path))
		}
		groups = append(groups, words.HomeShort(g.Parent, home)+": "+strings.Join(names, ", "))
	}
	if want := []string{"~/Documents: thesis", "~/src: api, web"}; !slices.Equal(groups, want) {
		t.Errorf("offered %q, want %q (frontend is inside web)", groups, want)
	}
	if p.add.Text != "Add these 3 folders" {
		t.Errorf("button %q", p.add.Text)
	}
	// Untick one: the button counts the rest.
	test.Tap(p.checks[filepath.Join(home, "Documents/thesis")])
	if p.add.Text != "Add these 2 folders" {
		t.Errorf("after unticking thesis the button says %q", p.add.Text)
	}
	if _, ok := app.LoadSeenProjects(f.dir); !ok {
		t.Error("the finished scan was not recorded")
	}

	test.Tap(p.add)
	st := f.core.Snapshot().State
	var added []string
	for _, r := range st.Roots {
		added = append(added, words.HomeShort(r.Path, home))
		if !r.Enabled {
			t.Errorf("%s added turned off", r.Path)
		}
	}
	if want := []string{"~/src/api", "~/src/web"}; !slices.Equal(added, want) {
		t.Errorf("added %q, want %q", added, want)
	}
	if len(st.Decisions) != 0 {
		t.Errorf("adding decided %v: adding is not sharing", st.Decisions)
	}
	if r, _ := st.Root(filepath.Join(home, "src/api")); r.Branch != "main" || r.Source != app.SourceGit {
		t.Errorf("api added as %+v", r)
	}
	// The panel moves above the list, offering what is left.
	if len(roots.small.Objects) == 0 || len(roots.big.Objects) != 0 {
		t.Error("with folders, the panel is not above the list")
	}
	if !p.add.Disabled() || len(p.offer) != 1 {
		t.Errorf("after adding, the panel offers %d (the unticked thesis) with %q", len(p.offer), p.add.Text)
	}
	test.Tap(p.later)
	if len(roots.small.Objects) != 0 || len(roots.big.Objects) != 0 {
		t.Error("Not now left the panel on screen")
	}

	// A later launch: the scan runs quietly and mentions only the new.
	newOne := filepath.Join(home, "src/cli")
	if err := os.MkdirAll(newOne, 0o755); err != nil {
		t.Fatal(err)
	}
	cands = append(cands, app.Candidate{Path: newOne, Kind: "repo", Repo: newOne})
	f.u.find = nil
	during = ""
	f.u.startFinding()
	if scans != 2 {
		t.Fatalf("%d scans, want a second at the next start", scans)
	}
	if onScreen != 0 {
		t.Errorf("a later start showed its scan: %q", during)
	}
	if got := p.title.Text; got != "1 new project since Rootkeeper last looked" || len(p.offer) != 1 || p.offer[0].Path != newOne {
		t.Errorf("later start: %q offering %v", got, p.offer)
	}
	if len(roots.small.Objects) == 0 {
		t.Error("the new project is not mentioned above the list")
	}
}

// Someone who used Rootkeeper before this scan existed (folders, no record
// of a scan at start) is not offered every project at once: the first
// quiet scan only records what is there.
func TestQuietScanWithoutRecordOffersNothing(t *testing.T) {
	home, cands := projectsHome(t)
	scan := func(ctx context.Context, req app.ScanRequest, found func(app.Candidate), progress func(app.ScanProgress)) (app.ScanSummary, error) {
		for _, c := range cands {
			found(c)
		}
		return app.ScanSummary{Visited: 9}, nil
	}
	f := newFixture(t, Options{Scan: scan, Home: home}, func(s *app.State) error {
		return s.AddRoot(fakeRoot("/home/ada/src/old", true))
	})
	f.u.startFinding()
	if len(f.u.roots.small.Objects) != 0 || len(f.u.roots.big.Objects) != 0 {
		t.Errorf("offered %d projects on a first quiet scan", len(f.u.roots.found.offer))
	}
	seen, ok := app.LoadSeenProjects(f.dir)
	if !ok || !seen[cands[0].Path] {
		t.Errorf("the scan was not recorded: %v", seen)
	}
}

// Cancel stops the scan at start; nothing is recorded, so the next start
// looks again.
func TestFirstLaunchScanCancel(t *testing.T) {
	home, cands := projectsHome(t)
	var f *fixture
	scan := func(ctx context.Context, req app.ScanRequest, found func(app.Candidate), progress func(app.ScanProgress)) (app.ScanSummary, error) {
		found(cands[0])
		if !f.u.roots.found.cancel.Visible() {
			t.Error("no Cancel while scanning")
		}
		test.Tap(f.u.roots.found.cancel)
		if ctx.Err() == nil {
			t.Error("Cancel did not cancel the scan")
		}
		return app.ScanSummary{Visited: 1}, ctx.Err()
	}
	f = newFixture(t, Options{Scan: scan, Home: home}, nil)
	f.u.startFinding()
	if _, ok := app.LoadSeenProjects(f.dir); ok {
		t.Error("a cancelled scan was recorded as seen")
	}
	if f.u.roots.found.cancel.Visible() {
		t.Error("Cancel still shows after the scan ended")
	}
	if !strings.HasPrefix(f.u.roots.found.status.Text, "Cancelled") {
		t.Errorf("status %q", f.u.roots.found.status.Text)
	}
}
