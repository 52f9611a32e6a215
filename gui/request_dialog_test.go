package gui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/link"
	"rootkeeper/app/words"
)

const (
	reqX = "/home/ada/src/x"
	reqY = "/home/ada/src/y"
)

func twoRequests(s *app.State) error {
	if err := s.AddServer(stdio("fs")); err != nil {
		return err
	}
	at := time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)
	for _, p := range []string{reqX, reqY} {
		if _, err := s.AddRequest("fs", p, "claude-code 2.1.330", at); err != nil {
			return err
		}
	}
	return nil
}

func openRequest(t *testing.T, f *fixture) *requestDialog {
	t.Helper()
	d, ok := f.u.openDialog.(*requestDialog)
	if !ok {
		t.Fatalf("no request dialog open (open: %T)", f.u.openDialog)
	}
	return d
}

// A host's request raises the small dialog, one folder at a time, whether
// or not the server is connected (a bridged server is not): it says who
// asked, with a notification; Allow makes the folder a root the server
// may see and drops the request; Later leaves the request open and does
// not ask again.
func TestRequestDialogDecidesOneFolder(t *testing.T) {
	f := newFixture(t, Options{}, twoRequests)
	d := openRequest(t, f)
	if d.Request.Path != reqX {
		t.Fatalf("dialog for %s, want %s", d.Request.Path, reqX)
	}
	want := "Claude Code 2.1.330 asks that fs see ~/src/x"
	if !strings.Contains(d.intro.Text, want) {
		t.Errorf("the dialog says %q, want %q in it", d.intro.Text, want)
	}
	if len(f.notified) != 1 || !strings.Contains(f.notified[0], want) {
		t.Errorf("notifications %q", f.notified)
	}
	test.Tap(d.allow)
	f.u.refresh()
	f.wantDecisions("fs " + reqX + " allow always dialog")
	st := f.core.Snapshot().State
	if r, ok := st.Root(reqX); !ok || r.Source != app.SourceRequested || !r.Enabled {
		t.Errorf("root %+v (present %v), want an enabled requested root", r, ok)
	}
	if _, ok := st.Request("fs", reqX); ok {
		t.Error("the decided request is still open")
	}

	d = openRequest(t, f)
	if d.Request.Path != reqY {
		t.Fatalf("second dialog for %s, want %s", d.Request.Path, reqY)
	}
	test.Tap(d.later)
	f.u.refresh()
	if f.u.consent != "" {
		t.Errorf("a dialog is open after Later: %q", f.u.consent)
	}
	if _, ok := f.core.Snapshot().State.Request("fs", reqY); !ok {
		t.Error("Later dropped the request")
	}
	f.wantDecisions("fs " + reqX + " allow always dialog")
}

// Deny records the no, until quit when so chosen, and the folder is not
// made a root the server sees.
func TestRequestDialogDeny(t *testing.T) {
	f := newFixture(t, Options{}, twoRequests)
	d := openRequest(t, f)
	d.scope.SetSelected(scopeUntilQuit)
	test.Tap(d.deny)
	f.u.refresh()
	f.wantDecisions("fs " + reqX + " deny until-quit dialog")
	if v := app.VisiblePaths(f.core.Snapshot(), "fs"); len(v) != 0 {
		t.Errorf("fs sees %q after a deny", v)
	}
}

// The Servers tab shows a server's live bridge sessions (host, protocol,
// pid, what it was last sent) and its open requests; a host's name is
// shown safe.
func TestServersTabShowsBridgesAndRequests(t *testing.T) {
	f := newFixture(t, Options{}, twoRequests)
	f.core.SeenBridge(app.BridgeSession{ID: 7, Server: "fs", Host: "claude-code\x1b[31m", HostVersion: "2.1.330",
		ProtocolVersion: "2025-06-18", PID: 4242, LastSent: []string{"file:///home/ada/src/x"}, LastSentAt: time.Now()})
	f.u.refresh()
	lines := bridgeLines(f.core.Snapshot(), "fs", "/home/ada")
	want := []string{
		"Live: bridged for claude-code\\x1b[31m 2.1.330 (protocol 2025-06-18, server pid 4242), last sent 1 root",
		"Waiting for your answer: claude-code 2.1.330 asks that fs see " + words.HomeShort(reqX, "/home/ada"),
		"Waiting for your answer: claude-code 2.1.330 asks that fs see " + words.HomeShort(reqY, "/home/ada"),
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	found := 0
	for _, o := range test.LaidOutObjects(f.u.servers.content) {
		if l, ok := o.(*pathLabel); ok && slices.Contains(want, l.full) {
			found++
		}
	}
	if found != len(want) {
		t.Errorf("the Servers tab shows %d of the %d lines", found, len(want))
	}
}

// A request put off with Later comes up again when it is asked anew: a
// host started the held server it belongs to and waits for the answer.
func TestRequestPutOffIsAskedAgainWhenAHostWaits(t *testing.T) {
	f := newFixture(t, Options{}, twoRequests)
	test.Tap(openRequest(t, f).later)
	f.u.refresh()
	d := openRequest(t, f)
	if d.Request.Path != reqY {
		t.Fatalf("dialog for %s, want %s", d.Request.Path, reqY)
	}
	test.Tap(d.later)
	f.u.refresh()
	if f.u.consent != "" {
		t.Fatalf("a dialog is open after both were put off: %q", f.u.consent)
	}
	// What the bridge does for a held server.
	if err := f.core.Update(func(s *app.State) error {
		s.TouchRequest("fs", reqX, time.Now().UTC())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f.u.refresh()
	if d := openRequest(t, f); d.Request.Path != reqX {
		t.Fatalf("dialog for %s, want %s asked again", d.Request.Path, reqX)
	}
}

// A folder on the command line of a host's protected server is asked
// about as people say it: the server by its name and its host's, the
// folder from ~. status keeps the internal name and the whole path.
func TestRequestDialogSaysHomeAndHost(t *testing.T) {
	const desktop = "/home/ada/Desktop"
	f := newFixture(t, Options{}, func(s *app.State) error {
		if err := s.AddServer(stdio("claude-code.filesystem")); err != nil {
			return err
		}
		_, err := s.AddRequest("claude-code.filesystem", desktop, app.FromCommandLine, time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC))
		return err
	})
	d := openRequest(t, f)
	if want := "filesystem (Claude Code) is configured with ~/Desktop. It is not started until you allow it."; d.intro.Text != want {
		t.Errorf("the dialog says\n %q\nwant\n %q", d.intro.Text, want)
	}
	var paths []string
	title := false
	for _, o := range test.LaidOutObjects(f.win.Canvas().Overlays().Top()) {
		if l, ok := o.(*pathLabel); ok {
			paths = append(paths, l.Text+" | "+l.full)
		}
		if l, ok := o.(*widget.Label); ok && l.Text == "filesystem (Claude Code) is asked to see a folder" {
			title = true
		}
	}
	if !title {
		t.Error("the title does not name filesystem (Claude Code)")
	}
	if want := []string{"~/Desktop | " + desktop}; !slices.Equal(paths, want) {
		t.Errorf("path labels %q, want %q (the whole path on hover)", paths, want)
	}
	r, _ := f.core.Snapshot().State.Request("claude-code.filesystem", desktop)
	if got := app.RequestText(r); got != "claude-code.filesystem is configured with "+desktop {
		t.Errorf("status would say %q", got)
	}
}

// reachFixture is a window over fs, a confined server, whose calls past its
// folders wait on the request for reqX (each call: ID, op, file), asked
// at at (their wait ends ten seconds later).
func reachFixture(t *testing.T, at time.Time, calls ...app.ReachCall) *fixture {
	t.Helper()
	f := newFixture(t, Options{}, func(s *app.State) error {
		if err := s.AddServer(stdio("fs")); err != nil {
			return err
		}
		return askReach(s, at, true, calls...)
	})
	f.u.now = func() time.Time { return at.Add(time.Second) }
	f.u.snap = nil
	f.u.refresh()
	return f
}

// askReach records calls on the request for reqX as the observer does.
func askReach(s *app.State, at time.Time, asking bool, calls ...app.ReachCall) error {
	for _, c := range calls {
		if _, err := s.AskReach("fs", reqX, c, at, asking); err != nil {
			return err
		}
	}
	return nil
}

func call(id, op, file, notOnce string) app.ReachCall {
	return app.ReachCall{ID: id, Op: op, Path: reqX + "/" + file, NotOnce: notOnce}
}

// callTexts are the lines of the open reach dialog's list of calls.
func callTexts(d *requestDialog) []string {
	var out []string
	for _, o := range d.calls.Objects {
		for _, l := range test.LaidOutObjects(o) {
			if l, ok := l.(*widget.Label); ok && l.Visible() {
				out = append(out, l.Text)
			}
		}
	}
	return out
}

var reachAt = time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)

// A confined server's read asks in plain words: one sentence, the calls
// (what and where, from ~), the folder once; Enter is Allow once, which
// lets through exactly that call and decides nothing. Other requests have
// no Allow once.
func TestReachDialogAllowOnceForARead(t *testing.T) {
	f := reachFixture(t, reachAt, call("c1", app.OpRead, "secret.txt", ""))
	d := openRequest(t, f)
	if want := "It waits for your answer before it can:"; d.intro.Text != want {
		t.Errorf("the dialog says %q, want %q", d.intro.Text, want)
	}
	if got, want := callTexts(d), []string{"• Read ~/src/x/secret.txt"}; !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
	// The folder is named once: by its row (the calls name their files).
	folder := 0
	for _, o := range test.LaidOutObjects(f.win.Canvas().Overlays().Top()) {
		text := ""
		switch l := o.(type) {
		case *widget.Label:
			text = l.Text
		case *pathLabel:
			text = l.Text
		}
		if strings.Contains(text+" ", "~/src/x ") {
			folder++
		}
	}
	if folder != 1 {
		t.Errorf("the folder ~/src/x is on %d lines, want 1", folder)
	}
	f.capture("dialog-reach-read.png")
	if d.once.Disabled() || d.once.Importance != widget.HighImportance || d.allow.Importance == widget.HighImportance {
		t.Errorf("Allow once disabled %v, importance %v; Allow folder %v", d.once.Disabled(), d.once.Importance, d.allow.Importance)
	}
	typeKey(f.win.Canvas(), fyne.KeyReturn)
	f.u.refresh()
	st := f.core.Snapshot().State
	if _, open := st.Request("fs", reqX); open || len(st.Once) != 1 || !slices.Equal(st.Once[0].Calls, []string{"c1"}) {
		t.Errorf("after Enter: request open %v, once %+v", open, st.Once)
	}
	f.wantDecisions()

	g := newFixture(t, Options{}, twoRequests)
	if openRequest(t, g).once != nil {
		t.Error("a host's request offers Allow once")
	}
}

// A call that joins while the dialog is open shows before it can be
// answered, and Allow once answers what is on screen, no more: a truncate
// that joined after the last render is not let through. With a write
// among the calls, Enter is Deny.
func TestReachDialogAnswersOnlyTheCallsOnScreen(t *testing.T) {
	f := reachFixture(t, reachAt, call("c1", app.OpRead, "a.txt", ""))
	d := openRequest(t, f)
	join := func(c app.ReachCall) {
		t.Helper()
		if err := f.core.Update(func(s *app.State) error { return askReach(s, reachAt.Add(time.Second), true, c) }); err != nil {
			t.Fatal(err)
		}
	}
	join(call("c2", app.OpTruncate, "b.txt", ""))
	f.u.refresh()
	if openRequest(t, f) != d {
		t.Fatal("a new dialog opened for a call that joined")
	}
	want := []string{"• Read ~/src/x/a.txt", "• Empty and rewrite ~/src/x/b.txt"}
	if got := callTexts(d); !slices.Equal(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	if d.deny.Importance != widget.HighImportance || d.once.Importance == widget.HighImportance {
		t.Errorf("with a write waiting the default is not Deny: deny %v, once %v", d.deny.Importance, d.once.Importance)
	}
	f.capture("dialog-reach-write.png")
	// A create joins, and the person clicks before the window drew it.
	join(call("c3", app.OpCreate, "new.txt", ""))
	test.Tap(d.once)
	f.u.refresh()
	st := f.core.Snapshot().State
	if len(st.Once) != 1 || !slices.Equal(st.Once[0].Calls, []string{"c1", "c2"}) {
		t.Fatalf("allow once answered %+v, want exactly c1 and c2 (on screen)", st.Once)
	}
	f.wantDecisions()
}

// A call allow once cannot do says why, and Allow folder is the way; when
// it is all that waits, Allow once is off and Enter is Deny. So it is for
// a list of reads with a program run among them.
func TestReachDialogSaysWhatAllowOnceCannotDo(t *testing.T) {
	why := "a folder cannot be made for it once"
	f := reachFixture(t, reachAt, call("c1", app.OpMkdir, "cache", why))
	d := openRequest(t, f)
	got := callTexts(d)
	want := []string{"• Make the folder ~/src/x/cache", "Allow once cannot let this through (" + why + "); Allow folder can."}
	if !slices.Equal(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	if !d.once.Disabled() || d.deny.Importance != widget.HighImportance {
		t.Errorf("Allow once disabled %v, Deny importance %v", d.once.Disabled(), d.deny.Importance)
	}
	f.capture("dialog-reach-mkdir.png")
	typeKey(f.win.Canvas(), fyne.KeyReturn)
	f.u.refresh()
	// Refused, the folder (no root) is that server's alone: no decision,
	// no root for every other server to be asked about.
	f.wantDecisions()
	if st := f.core.Snapshot().State; !st.Refused("fs", reqX) {
		t.Errorf("after Deny: refusals %+v", st.Refusals)
	}

	g := reachFixture(t, reachAt, call("c1", app.OpRead, "a.txt", ""), call("c2", app.OpExecute, "run.sh", "a program cannot be run for it once"))
	if d := openRequest(t, g); d.once.Disabled() || d.deny.Importance != widget.HighImportance {
		t.Errorf("read and run: Allow once disabled %v, Deny importance %v", d.once.Disabled(), d.deny.Importance)
	}
}

// When the wait runs out with the dialog open, it says so, Allow once goes
// off and Allow folder remains; so it is for a request nobody was there
// to be asked about. Allow folder (until quit) decides the folder.
func TestReachDialogWhenNothingWaits(t *testing.T) {
	f := reachFixture(t, reachAt, call("c1", app.OpRead, "a.txt", ""))
	d := openRequest(t, f)
	if d.goneRow.Visible() || len(f.timers) != 1 {
		t.Fatalf("gone shown %v, %d timers, want one for the end of the wait", d.goneRow.Visible(), len(f.timers))
	}
	f.u.now = func() time.Time { return reachAt.Add(11 * time.Second) }
	f.fire()
	if want := "fs's call gave up after 10 s; it was refused."; !d.goneRow.Visible() || d.gone.Text != want {
		t.Errorf("after the wait: %q (shown %v), want %q", d.gone.Text, d.goneRow.Visible(), want)
	}
	f.capture("dialog-reach-gone.png")
	if !d.once.Disabled() || d.allow.Disabled() || d.deny.Disabled() {
		t.Errorf("once disabled %v, folder %v, deny %v", d.once.Disabled(), d.allow.Disabled(), d.deny.Disabled())
	}
	if got := callTexts(d); !slices.Equal(got, []string{"• Read ~/src/x/a.txt"}) {
		t.Errorf("what was tried: %q", got)
	}
	d.scope.SetSelected(scopeUntilQuit)
	test.Tap(d.allow)
	f.u.refresh()
	// A folder that is no root is what fs needs to run: its alone.
	f.wantDecisions()
	if n, ok := f.core.Snapshot().State.Need("fs", reqX); !ok || n.Scope != app.UntilQuit || n.By != app.ByDialog {
		t.Errorf("need %+v %v, want fs's for %s until quit, by the dialog", n, ok, reqX)
	}
	if _, isRoot := f.core.Snapshot().State.Root(reqX); isRoot {
		t.Errorf("%s became a root", reqX)
	}

	g := newFixture(t, Options{}, func(s *app.State) error {
		if err := s.AddServer(stdio("fs")); err != nil {
			return err
		}
		return askReach(s, reachAt, false, call("c1", app.OpRead, "a.txt", ""))
	})
	d = openRequest(t, g)
	if want := "Nobody was there to ask when fs tried this; it was refused."; d.gone.Text != want {
		t.Errorf("unasked: %q, want %q", d.gone.Text, want)
	}
	if !d.once.Disabled() || d.deny.Importance != widget.HighImportance {
		t.Errorf("unasked: once disabled %v, deny %v", d.once.Disabled(), d.deny.Importance)
	}
	if got := callTexts(d); !slices.Equal(got, []string{"• Read ~/src/x/a.txt"}) {
		t.Errorf("unasked, what was tried: %q", got)
	}
}

// Allow once clicked as the wait ran out lets nothing through and keeps
// the request: it is asked again, saying the call gave up.
func TestReachDialogAllowOnceTooLate(t *testing.T) {
	f := reachFixture(t, reachAt, call("c1", app.OpRead, "a.txt", ""))
	d := openRequest(t, f)
	f.u.now = func() time.Time { return reachAt.Add(11 * time.Second) }
	test.Tap(d.once)
	st := f.core.Snapshot().State
	if _, open := st.Request("fs", reqX); !open || len(st.Once) != 0 {
		t.Fatalf("request open %v, once %+v", open, st.Once)
	}
	if d2 := openRequest(t, f); d2 == d || !d2.goneRow.Visible() {
		t.Errorf("not asked again as given up (same dialog %v)", d2 == d)
	}
}

// A folder whose name says credentials are kept there carries the share
// dialog's warning (app.RiskWarnings).
func TestReachDialogWarnsOfCredentials(t *testing.T) {
	const keys = "/home/ada/.ssh"
	f := newFixture(t, Options{}, func(s *app.State) error {
		if err := s.AddServer(stdio("fs")); err != nil {
			return err
		}
		_, err := s.AskReach("fs", keys, app.ReachCall{ID: "c1", Op: app.OpRead, Path: keys + "/id_ed25519"}, reachAt, true)
		return err
	})
	f.u.now = func() time.Time { return reachAt }
	f.u.snap = nil
	f.u.refresh()
	d := openRequest(t, f)
	want := app.RiskWarnings(app.RequestRoot(d.Request), "/home/ada")
	if len(want) == 0 || !strings.Contains(want[0], ".ssh") {
		t.Fatalf("RiskWarnings for ~/.ssh: %q", want)
	}
	found := false
	for _, o := range test.LaidOutObjects(f.win.Canvas().Overlays().Top()) {
		if l, ok := o.(*widget.Label); ok && l.Text == want[0] && l.Importance == widget.WarningImportance {
			found = true
		}
	}
	if !found {
		t.Errorf("the dialog does not warn %q", want[0])
	}
}

// A request answered elsewhere (the command line) closes its dialog.
func TestReachDialogClosesWhenAnsweredElsewhere(t *testing.T) {
	f := reachFixture(t, reachAt, call("c1", app.OpRead, "a.txt", ""))
	openRequest(t, f)
	if err := f.core.Update(func(s *app.State) error {
		_, err := s.GrantOnce("fs", reqX, nil, app.ByCommandLine, reachAt.Add(time.Second))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	f.u.refresh()
	if f.u.openDialog != nil || f.u.consent != "" {
		t.Errorf("still open: %T %q", f.u.openDialog, f.u.consent)
	}
}

// bannerTexts are the lines above the tabs.
func bannerTexts(f *fixture) []string {
	var out []string
	for _, o := range test.LaidOutObjects(f.u.banner) {
		if l, ok := o.(*widget.Label); ok {
			out = append(out, l.Text)
		}
	}
	return out
}

// A window that opens with requests the person put off shows what waits:
// a line with the count and the first, whose Answer… asks it. A server's
// call that waits now comes first, and is asked at once. What the person
// puts off is told to the running app (Options.OnLater), for the next
// window.
func TestTheWindowShowsWhatWaits(t *testing.T) {
	var q app.ConsentQueue
	st := app.State{}
	if err := twoRequests(&st); err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Requests {
		q.PutOffRequest(r)
	}
	var told []app.Later
	f := newFixture(t, Options{Later: q.Later(), OnLater: func(l app.Later) { told = append(told, l) }}, twoRequests)
	if f.u.openDialog != nil {
		t.Fatalf("a put-off request was asked at once: %T", f.u.openDialog)
	}
	want := "2 requests waiting for your answer; the first: Claude Code 2.1.330 asks that fs see ~/src/x"
	if got := bannerTexts(f); !slices.Contains(got, want) || f.u.requestLine == nil {
		t.Fatalf("banner %q, want the line %q", got, want)
	}
	f.capture("what-waits.png")
	test.Tap(f.u.requestLine)
	d := openRequest(t, f)
	if d.Request.Path != reqX {
		t.Fatalf("Answer… asked %s, want %s", d.Request.Path, reqX)
	}
	test.Tap(d.later)
	f.u.refresh()
	if f.u.openDialog != nil {
		t.Errorf("asked again after Later: %T", f.u.openDialog)
	}
	// Answer… took it off what was put off; Later put it back.
	if len(told) != 2 || len(told[0].Requests) != 1 || len(told[1].Requests) != 2 {
		t.Errorf("the app was told %+v, want one request put off, then both", told)
	}

	// A confined server's call waits: first in the line, and asked now.
	now := time.Now()
	f.u.now = func() time.Time { return now }
	if err := f.core.Update(func(s *app.State) error {
		_, err := s.AskReach("fs", "/home/ada/src/z", app.ReachCall{ID: "c1", Op: app.OpRead, Path: "/home/ada/src/z/a.txt"}, now, true)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	f.u.refresh()
	if d := openRequest(t, f); d.Request.From != app.FromReach {
		t.Fatalf("asked %+v, want the waiting call's request", d.Request)
	}
	want = "3 requests waiting for your answer; the first: fs tried to read ~/src/z/a.txt — allow ~/src/z?"
	if got := bannerTexts(f); !slices.Contains(got, want) {
		t.Errorf("banner %q, want the line %q", got, want)
	}
}

// The tray's line about a request opens the window on it (link.Show),
// put off or not, before what the queue would ask first; so does the
// Access tab's Answer… beside the server's requests.
func TestARequestIsAnsweredFromTheTrayAndTheAccessTab(t *testing.T) {
	f := newFixture(t, Options{}, twoRequests)
	test.Tap(openRequest(t, f).later) // reqX put off; reqY asked
	f.u.refresh()
	test.Tap(openRequest(t, f).later)
	f.u.refresh()
	f.u.show(link.Show{Server: "fs", Request: reqY})
	if d := openRequest(t, f); d.Request.Path != reqY {
		t.Fatalf("the tray's line asked %s, want %s", d.Request.Path, reqY)
	}
	test.Tap(openRequest(t, f).later)
	f.u.refresh()

	f.u.selectTab("Access")
	f.u.access.selectServer("fs")
	if n := len(f.u.access.answers); n != 2 {
		t.Fatalf("the Access tab lists %d requests of fs, want 2", n)
	}
	test.Tap(f.u.access.answers[1])
	if d := openRequest(t, f); d.Request.Path != reqY {
		t.Fatalf("Answer… asked %s, want %s", d.Request.Path, reqY)
	}
	test.Tap(openRequest(t, f).allow)
	f.u.refresh()
	if n := len(f.u.access.answers); n != 1 {
		t.Errorf("after the answer the Access tab lists %d requests, want 1", n)
	}
}
