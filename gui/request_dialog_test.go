package gui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
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
		"Waiting for your answer: claude-code 2.1.330 asks that fs see " + app.HomeShort(reqX, "/home/ada"),
		"Waiting for your answer: claude-code 2.1.330 asks that fs see " + app.HomeShort(reqY, "/home/ada"),
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

// An attempt of a confined server asks in the same dialog, with Allow
// once: the request is answered once (app.State.GrantOnce), nothing is
// decided. Other requests have no such button.
func TestRequestDialogAllowOnce(t *testing.T) {
	f := newFixture(t, Options{}, func(s *app.State) error {
		if err := s.AddServer(stdio("fs")); err != nil {
			return err
		}
		_, err := s.AskReach("fs", reqX, app.ReachCall{ID: "c1", Op: app.OpRead, Path: reqX + "/secret.txt"}, time.Now().UTC(), true)
		return err
	})
	d := openRequest(t, f)
	if want := "fs tried to read "; !strings.Contains(d.intro.Text, want) || d.once == nil {
		t.Fatalf("the dialog says %q (once button %v)", d.intro.Text, d.once != nil)
	}
	test.Tap(d.once)
	f.u.refresh()
	st := f.core.Snapshot().State
	if _, open := st.Request("fs", reqX); open || len(st.Once) != 1 || st.Once[0].Path != reqX {
		t.Errorf("after Allow once: request open %v, once %+v", open, st.Once)
	}
	f.wantDecisions()

	g := newFixture(t, Options{}, twoRequests)
	if openRequest(t, g).once != nil {
		t.Error("a host's request offers Allow once")
	}
}
