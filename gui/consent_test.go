package gui

import (
	"slices"
	"testing"

	"fyne.io/fyne/v2/test"

	"rootkeeper/app"
)

const (
	rootA = "/home/ada/src/alpha"
	rootB = "/home/ada/src/beta"
	rootC = "/home/ada/work/gamma"
)

// threeRoots has three enabled roots, servers fs and git, and one earlier
// decision (git may see alpha).
func threeRoots(s *app.State) error {
	for _, p := range []string{rootA, rootB, rootC} {
		if err := s.AddRoot(fakeRoot(p, true)); err != nil {
			return err
		}
	}
	for _, n := range []string{"fs", "git"} {
		if err := s.AddServer(stdio(n)); err != nil {
			return err
		}
	}
	return s.Decide(allow("git", rootA))
}

func openPending(t *testing.T, f *fixture) *pendingDialog {
	t.Helper()
	d, ok := f.u.openDialog.(*pendingDialog)
	if !ok {
		t.Fatalf("no pending dialog open (open: %T)", f.u.openDialog)
	}
	return d
}

func TestPendingDialogOpensForConnectedServerOnly(t *testing.T) {
	f := newFixture(t, Options{}, threeRoots)
	f.healthy()
	if f.u.openDialog != nil {
		t.Fatalf("a dialog opened before any server connected: %T", f.u.openDialog)
	}
	f.connect("fs")
	d := openPending(t, f)
	if d.Server != "fs" {
		t.Fatalf("dialog for %q, want fs", d.Server)
	}
	var paths []string
	for _, r := range d.Roots {
		paths = append(paths, r.Root.Path)
	}
	if want := []string{rootA, rootB, rootC}; !slices.Equal(paths, want) {
		t.Errorf("dialog lists %q, want %q", paths, want)
	}
	for i, c := range d.checks {
		if c.Checked {
			t.Errorf("root %d ticked in advance", i)
		}
	}
	if len(f.notified) != 1 {
		t.Errorf("notifications: %q, want one", f.notified)
	}
	// Until the person answers, fs sees nothing.
	if v := app.VisiblePaths(f.core.Snapshot(), "fs"); len(v) != 0 {
		t.Errorf("fs sees %q before answering", v)
	}
}

func TestPendingDialogAllowRecordsExactlyTheTicked(t *testing.T) {
	f := newFixture(t, Options{}, threeRoots)
	f.healthy()
	f.connect("fs")
	d := openPending(t, f)
	test.Tap(d.checks[0]) // alpha
	test.Tap(d.checks[2]) // gamma
	test.Tap(d.allow)
	f.wantDecisions(
		"git "+rootA+" allow always command-line",
		"fs "+rootA+" allow always dialog",
		"fs "+rootB+" deny always dialog",
		"fs "+rootC+" allow always dialog",
	)
	if got, want := app.VisiblePaths(f.core.Snapshot(), "fs"), []string{rootA, rootC}; !slices.Equal(got, want) {
		t.Errorf("fs sees %q, want %q", got, want)
	}
	if f.u.openDialog != nil && f.u.consent != "" {
		t.Errorf("a dialog is still open: %q", f.u.consent)
	}
}

func TestPendingDialogUntilQuit(t *testing.T) {
	f := newFixture(t, Options{}, threeRoots)
	f.healthy()
	f.connect("fs")
	d := openPending(t, f)
	test.Tap(d.checks[1])
	d.scope.SetSelected(scopeUntilQuit)
	test.Tap(d.allow)
	f.wantDecisions(
		"git "+rootA+" allow always command-line",
		"fs "+rootA+" deny until-quit dialog",
		"fs "+rootB+" allow until-quit dialog",
		"fs "+rootC+" deny until-quit dialog",
	)
}

func TestPendingDialogDenyIsRemembered(t *testing.T) {
	f := newFixture(t, Options{}, threeRoots)
	f.healthy()
	f.connect("fs")
	d := openPending(t, f)
	test.Tap(d.checks[0]) // ticking and then denying all denies all
	test.Tap(d.deny)
	f.wantDecisions(
		"git "+rootA+" allow always command-line",
		"fs "+rootA+" deny always dialog",
		"fs "+rootB+" deny always dialog",
		"fs "+rootC+" deny always dialog",
	)
	// Remembered: reconnecting asks nothing.
	f.u.openDialog = nil
	f.core.SetServerStatus("fs", app.ServerStatus{State: app.ServerStarting})
	f.u.refresh()
	f.connect("fs")
	if f.u.openDialog != nil {
		t.Errorf("asked again after a deny: %T", f.u.openDialog)
	}
}

func TestPendingDialogsQueueOnePerServer(t *testing.T) {
	f := newFixture(t, Options{}, threeRoots)
	f.healthy()
	f.connect("fs")
	f.connect("git")
	first := openPending(t, f)
	if first.Server != "fs" {
		t.Fatalf("first dialog for %q, want fs", first.Server)
	}
	test.Tap(first.deny)
	second := openPending(t, f)
	if second.Server != "git" || len(second.Roots) != 2 {
		t.Fatalf("second dialog for %q with %d roots, want git with beta and gamma", second.Server, len(second.Roots))
	}
}

func TestShareDialogRecordsTickedServers(t *testing.T) {
	folder := t.TempDir()
	f := newFixture(t, Options{}, func(s *app.State) error {
		if err := s.AddServer(stdio("fs")); err != nil {
			return err
		}
		return s.AddServer(stdio("git"))
	})
	f.u.shareFolder(folder, app.SourcePicked, "", "")
	d, ok := f.u.openDialog.(*shareDialog)
	if !ok {
		t.Fatalf("no share dialog: %T", f.u.openDialog)
	}
	if len(d.checks) != 2 || d.checks[0].Checked || d.checks[1].Checked {
		t.Fatalf("want two unticked server checks, got %d", len(d.checks))
	}
	test.Tap(d.checks[1]) // git
	test.Tap(d.share)
	snap := f.core.Snapshot()
	if len(snap.State.Roots) != 1 || !snap.State.Roots[0].Enabled {
		t.Fatalf("roots after share: %+v", snap.State.Roots)
	}
	p := snap.State.Roots[0].Path
	f.wantDecisions("fs "+p+" deny always dialog", "git "+p+" allow always dialog")
}

func TestShareDialogCancelChangesNothing(t *testing.T) {
	f := newFixture(t, Options{}, func(s *app.State) error { return s.AddServer(stdio("fs")) })
	f.u.shareFolder(t.TempDir(), app.SourcePicked, "", "")
	d := f.u.openDialog.(*shareDialog)
	test.Tap(d.checks[0])
	test.Tap(d.cancel)
	if snap := f.core.Snapshot(); len(snap.State.Roots) != 0 || len(snap.State.Decisions) != 0 {
		t.Errorf("cancel changed the state: %+v", snap.State)
	}
	if f.u.consent != "" {
		t.Errorf("consent still marked open: %q", f.u.consent)
	}
}

func TestTrayTickOfUndecidedRootAsksInsteadOfExposing(t *testing.T) {
	f := newFixture(t, Options{}, func(s *app.State) error {
		if err := s.AddRoot(fakeRoot(rootA, false)); err != nil {
			return err
		}
		return s.AddServer(stdio("fs"))
	})
	f.healthy()
	f.u.trayActions().ToggleRoot(rootA, true)
	d, ok := f.u.openDialog.(*shareDialog)
	if !ok {
		t.Fatalf("ticking an undecided root opened %T, want the share dialog", f.u.openDialog)
	}
	if r, _ := f.core.Snapshot().State.Root(rootA); r.Enabled {
		t.Errorf("root enabled before the person answered")
	}
	f.wantDecisions()
	test.Tap(d.checks[0])
	test.Tap(d.share)
	f.wantDecisions("fs " + rootA + " allow always dialog")
	if got := app.VisiblePaths(f.core.Snapshot(), "fs"); !slices.Equal(got, []string{rootA}) {
		t.Errorf("fs sees %q after allowing", got)
	}
}

func TestTrayTickOfApprovedRootEnablesIt(t *testing.T) {
	f := newFixture(t, Options{}, func(s *app.State) error {
		if err := s.AddRoot(fakeRoot(rootA, false)); err != nil {
			return err
		}
		if err := s.AddServer(stdio("fs")); err != nil {
			return err
		}
		return s.Decide(allow("fs", rootA))
	})
	f.healthy()
	f.u.trayActions().ToggleRoot(rootA, true)
	if f.u.openDialog != nil {
		t.Fatalf("asked again about an approved root: %T", f.u.openDialog)
	}
	if got := app.VisiblePaths(f.core.Snapshot(), "fs"); !slices.Equal(got, []string{rootA}) {
		t.Errorf("fs sees %q", got)
	}
	f.u.trayActions().ToggleRoot(rootA, false)
	if got := app.VisiblePaths(f.core.Snapshot(), "fs"); len(got) != 0 {
		t.Errorf("fs still sees %q after untick", got)
	}
	f.wantDecisions("fs " + rootA + " allow always command-line")
}
