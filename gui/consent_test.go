package gui

import (
	"slices"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"rootkeeper/app"
	"rootkeeper/app/link"
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

// oneRootTwoServers is rootA and servers fs and git, nothing decided.
func oneRootTwoServers(s *app.State) error {
	if err := s.AddRoot(fakeRoot(rootA, true)); err != nil {
		return err
	}
	for _, n := range []string{"fs", "git"} {
		if err := s.AddServer(stdio(n)); err != nil {
			return err
		}
	}
	return nil
}

func openPending(t *testing.T, f *fixture) *pendingDialog {
	t.Helper()
	d, ok := f.u.openDialog.(*pendingDialog)
	if !ok {
		t.Fatalf("no pending dialog open (open: %T)", f.u.openDialog)
	}
	return d
}

func openReview(t *testing.T, f *fixture) *reviewDialog {
	t.Helper()
	d, ok := f.u.openDialog.(*reviewDialog)
	if !ok {
		t.Fatalf("no review open (open: %T)", f.u.openDialog)
	}
	return d
}

// questionsOf lists a review's questions as "server path".
func questionsOf(d *reviewDialog) []string {
	var out []string
	for _, q := range d.Questions {
		out = append(out, q.Server+" "+q.Root.Path)
	}
	return out
}

func TestReviewOpensForConnectedServerOnly(t *testing.T) {
	f := newFixture(t, Options{}, threeRoots)
	f.healthy()
	if f.u.openDialog != nil {
		t.Fatalf("a dialog opened before any server connected: %T", f.u.openDialog)
	}
	f.connect("fs")
	d := openReview(t, f)
	if got, want := questionsOf(d), []string{"fs " + rootA, "fs " + rootB, "fs " + rootC}; !slices.Equal(got, want) {
		t.Errorf("review asks %q, want %q", got, want)
	}
	for i, on := range d.ticked {
		if on {
			t.Errorf("question %d ticked in advance", i)
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

// One screen for every server's questions, not a queue of dialogs.
func TestReviewAsksEveryServerAtOnce(t *testing.T) {
	f := newFixture(t, Options{}, threeRoots)
	f.healthy()
	f.core.SetServerStatus("fs", app.ServerStatus{State: app.ServerConnected})
	f.core.SetServerStatus("git", app.ServerStatus{State: app.ServerConnected})
	f.u.refresh()
	d := openReview(t, f)
	want := []string{"fs " + rootA, "fs " + rootB, "fs " + rootC, "git " + rootB, "git " + rootC}
	if got := questionsOf(d); !slices.Equal(got, want) {
		t.Fatalf("review asks %q, want %q", got, want)
	}
	// Grouped by folder, beta heads fs and git.
	d.group.SetSelected(byFolder)
	var heads []string
	for _, r := range d.rows {
		if r.Q < 0 {
			heads = append(heads, r.Group)
		}
	}
	if !slices.Equal(heads, []string{rootA, rootB, rootC}) {
		t.Errorf("folder groups %q", heads)
	}
	// Tick the beta group: both servers may see beta; the rest is denied.
	d.tickGroup(rootB, true)
	test.Tap(d.allow)
	f.wantDecisions(
		"git "+rootA+" allow always command-line",
		"fs "+rootA+" deny always dialog",
		"fs "+rootB+" allow always dialog",
		"fs "+rootC+" deny always dialog",
		"git "+rootB+" allow always dialog",
		"git "+rootC+" deny always dialog",
	)
	if f.u.openDialog != nil && f.u.consent != "" {
		t.Errorf("a dialog is still open: %q", f.u.consent)
	}
}

func TestReviewAllowRecordsExactlyTheTicked(t *testing.T) {
	f := newFixture(t, Options{}, threeRoots)
	f.healthy()
	f.connect("fs")
	d := openReview(t, f)
	d.ticked[0] = true // alpha
	d.ticked[2] = true // gamma
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
}

func TestReviewFilterSelectAllAndUntilQuit(t *testing.T) {
	f := newFixture(t, Options{}, threeRoots)
	f.healthy()
	f.connect("fs")
	d := openReview(t, f)
	test.Type(d.filter, "beta")
	test.Tap(d.all) // ticks only what the filter shows
	d.scope.SetSelected(scopeUntilQuit)
	test.Tap(d.allow)
	f.wantDecisions(
		"git "+rootA+" allow always command-line",
		"fs "+rootA+" deny until-quit dialog",
		"fs "+rootB+" allow until-quit dialog",
		"fs "+rootC+" deny until-quit dialog",
	)
}

func TestReviewDenyIsRemembered(t *testing.T) {
	f := newFixture(t, Options{}, threeRoots)
	f.healthy()
	f.connect("fs")
	d := openReview(t, f)
	test.Tap(d.all) // ticking and then denying all denies all
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

// Later closes the review without deciding; it is not asked again until a
// new question comes, and the banner offers it.
func TestReviewLater(t *testing.T) {
	f := newFixture(t, Options{}, threeRoots)
	f.healthy()
	f.connect("fs")
	test.Tap(openReview(t, f).later)
	if f.u.openDialog != nil || f.u.consent != "" {
		t.Fatalf("still open after Later: %T %q", f.u.openDialog, f.u.consent)
	}
	f.wantDecisions("git " + rootA + " allow always command-line")
	f.core.SetServerStatus("fs", app.ServerStatus{State: app.ServerConnected, Restarts: 1})
	f.u.refresh()
	if f.u.openDialog != nil {
		t.Fatalf("asked again after Later: %T", f.u.openDialog)
	}
	if f.u.bannerKey == "" || len(f.u.banner.Objects) == 0 {
		t.Fatal("no banner offers the review")
	}
	f.u.reviewNow()
	if d := openReview(t, f); len(d.Questions) != 3 {
		t.Errorf("review again with %d questions", len(d.Questions))
	}
}

// A single question (one folder, one server) gets the small dialog.
func TestOneQuestionGetsTheSmallDialog(t *testing.T) {
	f := newFixture(t, Options{}, func(s *app.State) error {
		if err := s.AddRoot(fakeRoot(rootA, true)); err != nil {
			return err
		}
		return s.AddServer(stdio("fs"))
	})
	f.healthy()
	f.connect("fs")
	d := openPending(t, f)
	if d.Server != "fs" || len(d.Roots) != 1 {
		t.Fatalf("small dialog for %s with %d roots", d.Server, len(d.Roots))
	}
	test.Tap(d.checks[0])
	test.Tap(d.allow)
	f.wantDecisions("fs " + rootA + " allow always dialog")
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
	// The tray is the running app's; it asks the window to ask.
	var shows []link.Show
	tr := &tray{opts: TrayOptions{Core: f.core, Show: func(s link.Show) { shows = append(shows, s) }}}
	tr.actions().ToggleRoot(rootA, true)
	if want := []link.Show{{Share: rootA}}; !slices.Equal(shows, want) {
		t.Fatalf("the tray asked the window to show %+v, want %+v", shows, want)
	}
	if r, _ := f.core.Snapshot().State.Root(rootA); r.Enabled {
		t.Errorf("root enabled before the person answered")
	}
	f.u.show(shows[0])
	d, ok := f.u.openDialog.(*shareDialog)
	if !ok {
		t.Fatalf("ticking an undecided root opened %T, want the share dialog", f.u.openDialog)
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
	tr := &tray{opts: TrayOptions{Core: f.core, Show: func(s link.Show) { t.Errorf("the tray asked the window to show %+v", s) }}}
	tr.actions().ToggleRoot(rootA, true)
	if f.u.openDialog != nil {
		t.Fatalf("asked again about an approved root: %T", f.u.openDialog)
	}
	if got := app.VisiblePaths(f.core.Snapshot(), "fs"); !slices.Equal(got, []string{rootA}) {
		t.Errorf("fs sees %q", got)
	}
	tr.actions().ToggleRoot(rootA, false)
	if got := app.VisiblePaths(f.core.Snapshot(), "fs"); len(got) != 0 {
		t.Errorf("fs still sees %q after untick", got)
	}
	f.wantDecisions("fs " + rootA + " allow always command-line")
}

// A server that connects while another is still starting waits for it:
// one folder for two servers is one review, not two small dialogs in a
// row; a server that never connects holds the questions no longer than
// app.QuestionSettle.
func TestQuestionsWaitForServersStillStarting(t *testing.T) {
	var timers []func()
	f := newFixture(t, Options{}, oneRootTwoServers)
	f.u.after = func(d time.Duration, fn func()) {
		if d <= 0 || d > app.QuestionSettle {
			t.Errorf("waits %v", d)
		}
		timers = append(timers, fn)
	}
	f.healthy()
	f.core.SetServerStatus("git", app.ServerStatus{State: app.ServerStarting, Since: time.Now()})
	f.connect("fs")
	if f.u.openDialog != nil {
		t.Fatalf("a dialog opened while git was still starting: %T", f.u.openDialog)
	}
	f.u.refresh()
	if len(timers) != 1 {
		t.Fatalf("%d timers, want one", len(timers))
	}
	f.connect("git")
	d := openReview(t, f)
	if got, want := questionsOf(d), []string{"fs " + rootA, "git " + rootA}; !slices.Equal(got, want) {
		t.Fatalf("review asks %q, want %q", got, want)
	}
	timers[0]() // late: the review is open already
	if openReview(t, f) != d {
		t.Fatal("the settle timer opened another dialog")
	}

	// git never connects: once the timer fires, fs is asked alone.
	f2 := newFixture(t, Options{}, oneRootTwoServers)
	timers = nil
	f2.u.after = func(_ time.Duration, fn func()) { timers = append(timers, fn) }
	f2.healthy()
	// On the window's clock, git has been starting for all but a
	// millisecond of QuestionSettle.
	now := time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)
	f2.u.now = func() time.Time { return now }
	since := now.Add(-app.QuestionSettle + time.Millisecond)
	f2.core.SetServerStatus("git", app.ServerStatus{State: app.ServerStarting, Since: since})
	f2.connect("fs")
	if f2.u.openDialog != nil || len(timers) != 1 {
		t.Fatalf("open %T, %d timers", f2.u.openDialog, len(timers))
	}
	now = since.Add(app.QuestionSettle) // the timer's time has come
	timers[0]()
	if got := openPending(t, f2).Server; got != "fs" {
		t.Fatalf("asked %q", got)
	}
}

// Servers that connect while the review is open join it: one screen, not
// a queue.
func TestReviewGrowsAsServersConnect(t *testing.T) {
	f := newFixture(t, Options{}, threeRoots)
	f.healthy()
	f.connect("fs")
	d := openReview(t, f)
	if len(d.Questions) != 3 {
		t.Fatalf("%d questions for fs", len(d.Questions))
	}
	f.connect("git")
	if openReview(t, f) != d {
		t.Fatal("a second dialog opened instead of growing the review")
	}
	want := []string{"fs " + rootA, "fs " + rootB, "fs " + rootC, "git " + rootB, "git " + rootC}
	if got := questionsOf(d); !slices.Equal(got, want) {
		t.Fatalf("review asks %q, want %q", got, want)
	}
	d.ticked[4] = true // git may see gamma
	test.Tap(d.allow)
	f.wantDecisions(
		"git "+rootA+" allow always command-line",
		"fs "+rootA+" deny always dialog",
		"fs "+rootB+" deny always dialog",
		"fs "+rootC+" deny always dialog",
		"git "+rootB+" deny always dialog",
		"git "+rootC+" allow always dialog",
	)
}
