package gui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/health"
)

// A folder that failed its access check has Check again on its row, and
// the click has the health monitor check it now: here its grandparent was
// renamed back, which no watch sees (the folder and its parent are
// watched, not what is above them), so without the click the folder would
// stay withdrawn until the minute's sweep.
func TestCheckAgainChecksTheFolderNow(t *testing.T) {
	base := apptest.RealTempDir(t)
	root := filepath.Join(base, "work", "src", "proj")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	var mon *health.Monitor
	f := newFixture(t, Options{}, func(s *app.State) error {
		if err := s.AddServer(stdio("fs")); err != nil {
			return err
		}
		return apptest.Share(s, "fs", app.Root{Path: root, Name: "proj"})
	})
	// The polls of an unwatchable folder come after the test.
	mon = health.NewMonitor(f.core, health.Options{PollInterval: time.Hour})
	f.u.opts.Health = mon
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- mon.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
	apptest.Until(t, f.core, "proj checked", func(s *app.Snapshot) bool { return s.Health[root].OK() })

	// The folder goes with its grandparent; the app is told (a check of
	// its own), and the row offers to check again.
	if err := os.Rename(filepath.Join(base, "work"), filepath.Join(base, "work-old")); err != nil {
		t.Fatal(err)
	}
	if h, err := mon.Check(ctx, root); err != nil || h.Status != app.HealthMissing {
		t.Fatalf("after its grandparent went: %+v %v", h, err)
	}
	f.u.refresh()
	row := f.u.roots.itemFor(root)
	if row == nil || !row.check.Visible() || row.check.Text != "Check again" || row.check.Disabled() {
		t.Fatalf("a missing folder's row has no Check again: %+v", row)
	}
	if got := app.VisiblePaths(f.core.Snapshot(), "fs"); len(got) != 0 {
		t.Fatalf("fs sees %q with its folder missing", got)
	}

	// It comes back where no watch looks; Check again finds it.
	if err := os.Rename(filepath.Join(base, "work-old"), filepath.Join(base, "work")); err != nil {
		t.Fatal(err)
	}
	test.Tap(row.check) // the fixture runs the check inline: it is done when Tap returns
	if h := f.core.Snapshot().Health[root]; !h.OK() {
		t.Fatalf("after Check again: %+v, want ok", h)
	}
	f.u.refresh()
	if row.check.Visible() {
		t.Error("Check again is still offered for a folder that passed")
	}
	if got := app.VisiblePaths(f.core.Snapshot(), "fs"); len(got) != 1 || got[0] != root {
		t.Errorf("fs sees %q after Check again, want %s", got, root)
	}
}

// Check again is offered only where it means something: not for a folder
// that passed, is not checked yet, or is off, and not without an app to
// check it.
func TestCheckAgainOnlyForAFailedCheck(t *testing.T) {
	f := newFixture(t, Options{}, func(s *app.State) error {
		for _, r := range []app.Root{fakeRoot("/src/ok", true), fakeRoot("/src/gone", true), fakeRoot("/src/new", true), fakeRoot("/src/off", false)} {
			if err := s.AddRoot(r); err != nil {
				return err
			}
		}
		return nil
	})
	f.u.opts.Health = health.NewMonitor(f.core, health.Options{}) // not running: nothing is clicked
	f.core.SetHealth("/src/ok", app.Health{Status: app.HealthOK})
	f.core.SetHealth("/src/gone", app.Health{Status: app.HealthMissing, Err: "gone"})
	f.core.SetHealth("/src/off", app.Health{Status: app.HealthMissing})
	f.u.refresh()
	for path, want := range map[string]bool{"/src/ok": false, "/src/gone": true, "/src/new": false, "/src/off": false} {
		if got := f.u.roots.itemFor(path).check.Visible(); got != want {
			t.Errorf("%s: Check again shown %v, want %v", path, got, want)
		}
	}
	f.u.opts.Health = nil
	f.u.snap = nil
	f.u.refresh()
	if f.u.roots.itemFor("/src/gone").check.Visible() {
		t.Error("Check again shown with nothing to check it")
	}
}

// A Check again the app refuses (the folder was turned off meanwhile, by
// the command line, say) is told, and the row comes back.
func TestCheckAgainRefusedIsTold(t *testing.T) {
	root := filepath.Join(t.TempDir(), "gone")
	f := newFixture(t, Options{}, func(s *app.State) error { return s.AddRoot(app.Root{Path: root, Name: "gone", Enabled: true}) })
	mon := health.NewMonitor(f.core, health.Options{})
	f.u.opts.Health = mon
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- mon.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
	apptest.Until(t, f.core, "gone checked", func(s *app.Snapshot) bool { return s.Health[root].Status == app.HealthMissing })
	f.u.refresh()
	row := f.u.roots.itemFor(root)
	// Turned off where the window has not drawn it yet.
	if err := f.core.Update(func(s *app.State) error { return s.SetEnabled(root, false) }); err != nil {
		t.Fatal(err)
	}
	apptest.Until(t, f.core, "the monitor to let go of it", func(s *app.Snapshot) bool { return s.Health[root].Status == app.HealthUnknown })
	test.Tap(row.check)
	said := ""
	for _, o := range test.LaidOutObjects(f.win.Canvas().Overlays().Top()) {
		if l, ok := o.(*widget.Label); ok {
			said += l.Text + "\n"
		}
	}
	if !strings.Contains(said, "Check again: "+root+": not an enabled folder") {
		t.Errorf("the refusal was told as %q", said)
	}
	if row.check.Text != "Check again" || row.check.Disabled() {
		t.Errorf("after a refused Check again the button is %q (disabled %v)", row.check.Text, row.check.Disabled())
	}
}
