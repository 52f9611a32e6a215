package gui

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

var update = flag.Bool("update", false, "rewrite the golden markup files in testdata")

func TestMain(m *testing.M) {
	time.Local = time.UTC // activity times in goldens
	flag.Parse()
	os.Exit(m.Run())
}

// fixture is a ui over a fresh state in a temporary folder, with slow work
// run inline so that the whole test stays on one goroutine.
type fixture struct {
	t        *testing.T // nil in benchmarks
	u        *ui
	win      fyne.Window
	core     *app.Core
	dir      string
	notified []string
	// timers are what the ui asked to run later (ui.after), in order: a
	// test runs them when it means time to have passed (fire). Run on a
	// timer's goroutine, they would race with the test.
	timers []fixtureTimer
}

type fixtureTimer struct {
	after time.Duration
	fn    func()
}

// fire runs the timers asked for so far, and forgets them.
func (f *fixture) fire() {
	ts := f.timers
	f.timers = nil
	for _, t := range ts {
		t.fn()
	}
}

func newFixture(t testing.TB, opts Options, setup func(*app.State) error) *fixture {
	t.Helper()
	a := test.NewTempApp(t)
	core, dir := apptest.NewCore(t)
	if setup != nil {
		if err := core.Update(setup); err != nil {
			t.Fatal(err)
		}
	}
	opts.Core = core
	if opts.StateDir == "" {
		opts.StateDir = dir
	}
	if opts.Home == "" {
		opts.Home = "/home/ada"
	}
	win := test.NewTempWindow(t, nil)
	f := &fixture{win: win, core: core, dir: dir}
	f.t, _ = t.(*testing.T)
	u := newUI(a, win, opts)
	u.async = func(fn func()) { fn() }
	u.do = func(fn func()) { fn() }
	u.notify = func(_, body string) { f.notified = append(f.notified, body) }
	u.showWindow = func() {}
	u.after = func(d time.Duration, fn func()) { f.timers = append(f.timers, fixtureTimer{d, fn}) }
	u.inspect = func(roots []app.Root, home string) []rootInfo {
		out := make([]rootInfo, len(roots))
		for i, r := range roots {
			out[i] = rootInfo{Root: r, Access: app.Health{Status: app.HealthOK}, Warnings: app.RiskWarnings(r, home)}
		}
		return out
	}
	f.u = u
	win.SetContent(u.build())
	win.Resize(fyne.NewSize(980, 680))
	u.refresh()
	return f
}

// fakeRoot is a root at a path that need not exist (AddRoot only checks
// its shape), so that goldens do not depend on temporary folder names.
func fakeRoot(path string, enabled bool) app.Root {
	return app.Root{Path: path, Name: filepath.Base(path), Source: app.SourceGit, Enabled: enabled,
		Added: time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)}
}

func stdio(name string) app.Server {
	return app.Server{Name: name, Type: app.TransportStdio, Command: "mcp-server-" + name}
}

func allow(server, root string) app.Decision {
	return app.Decision{Server: server, Root: root, Verdict: app.Allow, Scope: app.Always, By: app.ByCommandLine,
		At: time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)}
}

// healthy marks every root OK and re-renders.
func (f *fixture) healthy() {
	for _, r := range f.core.Snapshot().State.Roots {
		f.core.SetHealth(r.Path, app.Health{Status: app.HealthOK, Checked: time.Now()})
	}
	f.u.refresh()
}

func (f *fixture) connect(server string) {
	f.core.SetServerStatus(server, app.ServerStatus{State: app.ServerConnected, ProtocolVersion: "2025-06-18"})
	f.u.refresh()
}

// decisions lists the recorded decisions as "server root verdict scope by".
func (f *fixture) decisions() []string {
	var out []string
	for _, d := range f.core.Snapshot().State.Decisions {
		out = append(out, strings.Join([]string{d.Server, d.Root, string(d.Verdict), string(d.Scope), string(d.By)}, " "))
	}
	slices.Sort(out)
	return out
}

func (f *fixture) wantDecisions(want ...string) {
	f.t.Helper()
	slices.Sort(want)
	if got := f.decisions(); !slices.Equal(got, want) {
		f.t.Errorf("decisions:\n got %q\nwant %q", got, want)
	}
}

// assertMarkup compares the window's markup with testdata/name, or
// rewrites it with -update.
func (f *fixture) assertMarkup(name string) {
	f.t.Helper()
	got := test.RenderToMarkup(f.win.Canvas())
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			f.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		failed := filepath.Join("testdata", "failed", name)
		os.MkdirAll(filepath.Dir(failed), 0o755)
		os.WriteFile(failed, []byte(got), 0o644)
		f.t.Errorf("markup of %s differs from the golden; got written to %s (diff it, then -update if right)", name, failed)
	}
}

// capture writes the window as a PNG under testdata/screens when
// ROOTKEEPER_CAPTURE is set (for looking at, not for comparing).
func (f *fixture) capture(name string) {
	if os.Getenv("ROOTKEEPER_CAPTURE") == "" {
		return
	}
	os.MkdirAll(filepath.Join("testdata", "screens"), 0o755)
	writePNG(f.t, filepath.Join("testdata", "screens", name), f.win.Canvas().Capture())
}

func tapCheck(t *testing.T, c *widget.Check) {
	t.Helper()
	test.Tap(c)
}

// trayMenuFor is the tray menu for snap.
func trayMenuFor(snap *app.Snapshot, act trayActions) *fyne.Menu {
	return trayMenu(app.NewGrid(snap), act)
}

// itemFor is the Roots tab's row showing the root at path, nil when it is
// not on screen.
func (t *rootsTab) itemFor(path string) *rootItem {
	for _, it := range t.rows.byID {
		if it.path == path {
			return it
		}
	}
	return nil
}

// itemFor is the Access tab's row showing path, nil when it is not on
// screen.
func (t *accessTab) itemFor(path string) *accessItem {
	for _, it := range t.rows.byID {
		if it.path == path {
			return it
		}
	}
	return nil
}

// selectServer shows name's folders on the Access tab.
func (t *accessTab) selectServer(name string) { t.server.SetSelected(name) }
