package gui

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"rootkeeper/app"
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
