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
	"rootkeeper/app/audit"
)

const dest = "api.example.com:443"

// networkFixture is a window over fs, a confined server set to ask, whose
// connect to dest waits on its request (asked at reachAt).
func networkFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, Options{Landlock: abi(7)}, func(s *app.State) error {
		srv := stdio("fs")
		srv.Confine, srv.Network = true, &app.NetworkSetting{Mode: app.NetworkAsk}
		if err := s.AddServer(srv); err != nil {
			return err
		}
		_, err := s.AskNetwork("fs", dest, "203.0.113.7:443", app.ReachCall{ID: "n1", Op: app.OpConnect, Path: dest}, reachAt, true)
		return err
	})
	f.u.now = func() time.Time { return reachAt.Add(time.Second) }
	f.u.snap = nil
	f.u.refresh()
	return f
}

// A connect that waits raises the request dialog: the connect in words,
// the destination once, no folder; Enter is Deny, which the app makes
// remembered; nothing else is asked of it then.
func TestNetworkDialogEnterDenies(t *testing.T) {
	f := networkFixture(t)
	d := openRequest(t, f)
	if got, want := callTexts(d), []string{"• Connect to " + dest}; !slices.Equal(got, want) {
		t.Errorf("connects %q, want %q", got, want)
	}
	if d.once == nil || d.once.Disabled() || d.allow.Text != "Allow always" {
		t.Fatalf("buttons: once %v, allow %q", d.once, d.allow.Text)
	}
	f.capture("dialog-network.png")
	typeKey(f.win.Canvas(), fyne.KeyReturn)
	f.u.refresh()
	srv, _ := f.core.Snapshot().State.Server("fs")
	if n := srv.NetworkOf(); !slices.Equal(n.Deny, []string{dest}) || len(n.Allow) != 0 {
		t.Errorf("after Enter: %+v", n)
	}
	if _, open := f.core.Snapshot().State.Request("fs", dest); open {
		t.Error("the request stays after Deny")
	}
	f.wantDecisions() // no folder was decided
	entries, _ := audit.Read(f.dir, "fs")
	if i := slices.IndexFunc(entries, func(e audit.Entry) bool { return e.Decided == audit.NetworkDenied }); i < 0 || entries[i].Tried != dest || entries[i].Op != string(app.ByDialog) {
		t.Errorf("the audit trail: %+v", entries)
	}
}

// Allow once answers exactly the connect on screen; Allow always adds the
// destination to the server's network.
func TestNetworkDialogAllowOnceAndAlways(t *testing.T) {
	f := networkFixture(t)
	test.Tap(openRequest(t, f).once)
	f.u.refresh()
	st := f.core.Snapshot().State
	if _, ok := st.OnceFor("fs", "n1"); !ok || len(st.Requests) != 0 {
		t.Errorf("after Allow once: once %+v, requests %+v", st.Once, st.Requests)
	}
	g := networkFixture(t)
	test.Tap(openRequest(t, g).allow)
	g.u.refresh()
	srv, _ := g.core.Snapshot().State.Server("fs")
	if n := srv.NetworkOf(); n.Mode != app.NetworkAsk || !slices.Equal(n.Allow, []string{dest}) {
		t.Errorf("after Allow always: %+v", n)
	}
}

// The card's Network line: the setting as a select, what it means, the
// destinations reached, and Pin to these, which sets it to only those;
// choosing Off in the select stores it through the app.
func TestCardNetworkLine(t *testing.T) {
	f := newFixture(t, Options{Landlock: abi(7)}, func(s *app.State) error {
		srv := stdio("fs")
		srv.Confine = true
		return s.AddServer(srv)
	})
	t0 := time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)
	f.u.now = func() time.Time { return t0.Add(3 * time.Minute) }
	f.core.SetNetworkRecord(app.NetworkRecord{Server: "fs", Destinations: []app.Reached{
		{Dest: dest, Proto: app.ProtoTCP, Name: "api.example.com", Address: "203.0.113.7", Port: 443, First: t0, Last: t0.Add(time.Minute), Count: 12, Allowed: true},
		{Dest: "evil.example:*", Proto: app.ProtoLookup, Name: "evil.example", First: t0, Last: t0, Count: 1, Refused: 1},
	}})
	f.u.refresh()
	text, _ := cardOf(t, f, "fs")
	for _, want := range []string{
		"network open, watched: every destination it reaches is listed; names are not shown here (this build of Rootkeeper makes no network namespaces)\n",
		"api.example.com:443 (203.0.113.7) allowed, 12 times",
		"evil.example:* lookup refused, once",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("card says\n%s\nwant %q", text, want)
		}
	}
	pin := buttonsOf(f, 0)["Pin to these"]
	if pin == nil {
		t.Fatalf("no Pin to these on\n%s", text)
	}
	test.Tap(pin)
	srv, _ := f.core.Snapshot().State.Server("fs")
	if n := srv.NetworkOf(); n.Mode != app.NetworkOnly || !slices.Equal(n.Allow, []string{dest}) {
		t.Errorf("pinned: %+v", n)
	}
	text, _ = cardOf(t, f, "fs")
	if !strings.Contains(text, "network only "+dest) || buttonsOf(f, 0)["Pin to these"] != nil {
		t.Errorf("after Pin the card says\n%s", text)
	}
	sel := selectOf(f, 0)
	if sel == nil || sel.Selected != "Only…" {
		t.Fatalf("the network select: %+v", sel)
	}
	sel.SetSelected("Off")
	srv, _ = f.core.Snapshot().State.Server("fs")
	if srv.NetworkOf().Mode != app.NetworkOff {
		t.Errorf("after choosing Off: %+v", srv.Network)
	}
	text, _ = cardOf(t, f, "fs")
	if !strings.Contains(text, "network off: no socket reaches anything outside its sandbox") {
		t.Errorf("after Off the card says\n%s", text)
	}
}

// selectOf is the first select on card i.
func selectOf(f *fixture, i int) *widget.Select {
	var found *widget.Select
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.Select:
			if found == nil {
				found = w
			}
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		}
	}
	walk(f.u.servers.list.Objects[2*i])
	return found
}
