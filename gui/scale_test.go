package gui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"rootkeeper/app"
	"rootkeeper/app/audit"
)

// scaleState is n folders (project-1 … project-n) and m servers
// (server-1 … server-m), each server allowed 50 folders.
func scaleState(n, m int) func(*app.State) error {
	return func(s *app.State) error {
		base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range n {
			r := fakeRoot(fmt.Sprintf("/home/ada/src/project-%d", i+1), true)
			r.Added = base.Add(time.Duration(i) * time.Minute)
			s.Roots = append(s.Roots, r) // AddRoot one by one sorts n times
		}
		for j := range m {
			if err := s.AddServer(stdio(fmt.Sprintf("server-%d", j+1))); err != nil {
				return err
			}
		}
		var ds []app.Decision
		for j, srv := range s.Servers {
			for k := range min(50, n) {
				ds = append(ds, allow(srv.Name, s.Roots[(j*50+k)%n].Path))
			}
		}
		return s.DecideAll(ds)
	}
}

func scaleFixture(t testing.TB, n, m int) *fixture {
	f := newFixture(t, Options{}, scaleState(n, m))
	statuses := map[string]app.ServerStatus{}
	for _, name := range f.core.Snapshot().ServerNames() {
		statuses[name] = app.ServerStatus{State: app.ServerStarting}
	}
	f.core.SetServerStatuses(statuses)
	for _, r := range f.core.Snapshot().State.Roots {
		f.core.SetHealth(r.Path, app.Health{Status: app.HealthOK})
	}
	f.u.refresh()
	return f
}

// At 1,000 folders × 20 servers the window draws only the rows on screen,
// in natural order, filters, and redraws only what a change touched.
func TestWindowAtScale(t *testing.T) {
	f := scaleFixture(t, 1000, 20)
	rt := f.u.roots
	if len(rt.shown) != 1000 {
		t.Fatalf("%d rows, want 1000", len(rt.shown))
	}
	var first []string
	for _, l := range rt.shown[:3] {
		first = append(first, l.Root.Name)
	}
	if !slices.Equal(first, []string{"project-1", "project-2", "project-3"}) {
		t.Errorf("first rows %q: not in natural order", first)
	}
	if n := rt.rows.created; n == 0 || n > 40 {
		t.Errorf("%d row widgets for 1,000 folders, want only those on screen", n)
	}
	if l := rt.shown[1]; l.Seen != "Seen by server-1" {
		t.Errorf("project-2: %q", l.Seen)
	}

	// A change of one folder's health redraws that row alone.
	before := rt.rows.drawn
	f.core.SetHealth("/home/ada/src/project-2", app.Health{Status: app.HealthMissing})
	f.u.refresh()
	if drawn := rt.rows.drawn - before; drawn != 1 {
		t.Errorf("one health change redrew %d rows", drawn)
	}
	if l := rt.shown[1]; l.Health.Status != app.HealthMissing || l.Seen != "Seen by no server (until its access check passes)" {
		t.Errorf("project-2 after going missing: %+v", l)
	}

	test.Type(rt.filter, "project-99")
	if len(rt.shown) != 11 { // 99 and 990…999
		t.Errorf("filter kept %d rows, want 11", len(rt.shown))
	}

	// The per-server view: one switch per folder, 50 allowed.
	f.u.access.selectServer("server-3")
	allowed := 0
	for _, l := range f.u.access.all {
		if l.Access == app.AccessAllowed {
			allowed++
		}
	}
	if len(f.u.access.all) != 1000 || allowed != 50 || f.u.access.rows.created > 40 {
		t.Errorf("server-3: %d folders, %d allowed, %d row widgets", len(f.u.access.all), allowed, f.u.access.rows.created)
	}

	// Every server connects: one review screen for 19,000 questions.
	statuses := map[string]app.ServerStatus{}
	for _, name := range f.core.Snapshot().ServerNames() {
		statuses[name] = app.ServerStatus{State: app.ServerConnected}
	}
	f.core.SetServerStatuses(statuses)
	f.u.refresh()
	d := openReview(t, f)
	if len(d.Questions) != 19000 {
		t.Fatalf("review of %d questions, want 19,000", len(d.Questions))
	}
	if len(f.notified) != 1 {
		t.Errorf("notifications %q, want one", f.notified)
	}
	test.Type(d.filter, "project-1000")
	test.Tap(d.all)
	test.Tap(d.allow)
	snap := f.core.Snapshot()
	if got := app.SharedWith(snap, "/home/ada/src/project-1000"); len(got) != 20 {
		t.Errorf("project-1000 shared with %d servers, want 20", len(got))
	}
	if n := len(app.Pending(snap, "server-1")); n != 0 {
		t.Errorf("server-1 still has %d pending after the review", n)
	}
	if len(snap.State.Decisions) != 20000 {
		t.Errorf("%d decisions, want 20,000", len(snap.State.Decisions))
	}
}

// Snapshot change -> window updated at 1,000 folders × 20 servers (goal:
// one frame, 16 ms): a folder's health flips and the whole window renders
// the new snapshot. The anchor is the grid the window is drawn from.
func BenchmarkWindowUpdate(b *testing.B) {
	f := scaleFixture(b, 1000, 20)
	paths := f.core.Snapshot().State.Roots
	b.Run("refresh", func(b *testing.B) {
		i := 0
		for b.Loop() {
			st := app.HealthOK
			if i%2 == 0 {
				st = app.HealthMissing
			}
			f.core.SetHealth(paths[i%len(paths)].Path, app.Health{Status: st})
			f.u.refresh()
			i++
		}
	})
	b.Run("grid", func(b *testing.B) {
		snap := f.core.Snapshot()
		for b.Loop() {
			app.NewGrid(snap)
		}
	})
}

// BenchmarkActivityFullLog: the Activity tab on screen, one line added to
// a full audit log (its files and their rotated generations, 30 MB, some
// 150,000 lines) and the tab reloaded, as each change of the log does:
// "reload" as the tab does it (reading what was added), against the
// anchor "reread", the same reload reading the whole log again (as the
// tab did before it followed the log).
func BenchmarkActivityFullLog(b *testing.B) {
	f := newFixture(b, Options{}, nil)
	at := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	line := func(i int) audit.Entry {
		at = at.Add(time.Millisecond)
		if i%2 == 0 {
			return audit.Entry{Time: at, Server: "fs", Via: audit.ViaRootsList, Roots: []string{fmt.Sprintf("file:///home/ada/src/project-%d", i)}}
		}
		return audit.Entry{Time: at, Server: "nosy", Via: audit.ViaReach, Roots: []string{}, Op: app.OpRead,
			Tried: fmt.Sprintf("/home/ada/secret/missing-%d", i), Decided: audit.ReachIgnored}
	}
	i := 0
	for _, file := range []struct {
		name string
		size int
	}{{audit.RotatedName, audit.DefaultMaxSize}, {audit.NoiseRotatedName, audit.DefaultNoiseMaxSize},
		{audit.FileName, audit.DefaultMaxSize / 2}, {audit.NoiseName, audit.DefaultNoiseMaxSize / 2}} {
		var buf []byte
		for len(buf) < file.size {
			data, err := json.Marshal(line(i))
			if err != nil {
				b.Fatal(err)
			}
			buf = append(append(buf, data...), '\n')
			i++
		}
		if err := os.WriteFile(filepath.Join(f.dir, file.name), buf, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	f.u.selectTab("Activity")
	a := f.u.activity
	log := audit.NewLog(f.dir)
	reload := func(again bool) time.Duration {
		if err := log.Append(line(i)); err != nil {
			b.Fatal(err)
		}
		log.Close()
		i++
		kept := a.log
		if again {
			a.log = audit.NewFollower(f.dir) // one that has read nothing
		}
		began := time.Now()
		a.reload()
		took := time.Since(began)
		a.log = kept
		if len(a.entries) != i || len(a.rows) != i {
			b.Fatalf("%d entries in %d rows after a reload, want %d", len(a.entries), len(a.rows), i)
		}
		return took
	}
	var follow, reread time.Duration
	for n := 0; b.Loop(); n++ {
		for _, again := range []bool{n%2 == 0, n%2 != 0} {
			if again {
				reread += reload(true)
			} else {
				follow += reload(false)
			}
		}
	}
	// A keystroke in the filter: all the work it makes (the filter, off
	// the UI goroutine but here run in line, the fold, the list) against
	// the anchor, the match alone as the tab made it before (each line's
	// fields joined and put in lower case).
	var typed, joined time.Duration
	queries := []string{"secre", "secret"}
	for n := range b.N {
		began := time.Now()
		a.filter.SetText(queries[n%2])
		typed += time.Since(began)
		began = time.Now()
		kept := 0
		q := filterQuery(queries[n%2])
		for _, e := range slices.Backward(a.entries) {
			if strings.Contains(strings.ToLower(e.Server+" "+strings.Join(e.Roots, " ")+" "+e.Tried+" "+e.Error+" "+e.Via), q) {
				kept++
			}
		}
		joined += time.Since(began)
		if kept != len(a.shown) {
			b.Fatalf("the filter kept %d lines, the joined match %d", len(a.shown), kept)
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(per(follow), "reload-ms")
	b.ReportMetric(per(reread), "reread-ms")
	b.ReportMetric(float64(follow)/float64(reread), "ratio")
	b.ReportMetric(per(typed), "keystroke-ms")
	b.ReportMetric(per(joined), "joined-match-ms")
	b.ReportMetric(float64(typed)/float64(joined), "keystroke-ratio")
	b.ReportMetric(float64(i), "lines")
	b.ReportMetric(0, "ns/op")
}
