package cli

import (
	"errors"
	"strings"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/audit"
)

// setLandlock makes the system report abi (or err) for the test's length.
func setLandlock(t *testing.T, abi int, err error) {
	old := Landlock
	Landlock = func() (int, error) { return abi, err }
	t.Cleanup(func() { Landlock = old })
}

func (st Status) server(name string) ServerView {
	for _, s := range st.Servers {
		if s.Name == name {
			return s
		}
	}
	return ServerView{}
}

// TestServersAddConfine: a stdio server is confined by default and
// --no-confine turns that off, --confine is recorded as asked for in so
// many words; status says which servers are confined and under which ABI,
// and which are not ("roots are advice"); --confine or --no-confine on a
// remote server, or both at once, is bad usage.
func TestServersAddConfine(t *testing.T) {
	setLandlock(t, 7, nil)
	h := newHarness(t)
	out := h.ok("servers", "add", "fs", "--", "mcp-server-filesystem")
	if !strings.Contains(out, "fs runs confined (Landlock ABI 7)") {
		t.Errorf("servers add said %q", out)
	}
	h.ok("servers", "add", "strict", "--confine", "--", "mcp-server-filesystem")
	h.ok("servers", "add", "open", "--no-confine", "--", "mcp-server-filesystem")
	st, err := app.OpenStore(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	state, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range state.Servers {
		if s.Confine != (s.Name != "open") || s.ConfineRequired != (s.Name == "strict") {
			t.Errorf("server %s: Confine = %v, ConfineRequired = %v", s.Name, s.Confine, s.ConfineRequired)
		}
	}
	status := h.status()
	if got := status.server("fs").Confinement; got != app.ConfinedText(7) {
		t.Errorf("fs confinement %q", got)
	}
	if got := status.server("open").Confinement; got != NotConfined {
		t.Errorf("open confinement %q", got)
	}
	text := h.ok("status")
	if !strings.Contains(text, "  "+app.ConfinedText(7)+"\n") || !strings.Contains(text, "  not confined: roots are advice to this server\n") {
		t.Errorf("status text lacks the confinement lines:\n%s", text)
	}
	h.fails(2, []string{"servers", "add", "web", "--confine", "--url", "https://example.com/mcp"}, "--confine", `"web"`)
	h.fails(2, []string{"servers", "add", "web", "--no-confine", "--url", "https://example.com/mcp"}, "--no-confine", `"web"`)
	h.fails(2, []string{"servers", "add", "both", "--confine", "--no-confine", "--", "x"}, "--confine or --no-confine", `"both"`)
}

// TestConfineWhereLandlockIsMissing: a server confined by default runs
// unconfined there and status says so plainly; one added with --confine
// is not started, and status says that; servers add says which.
func TestConfineWhereLandlockIsMissing(t *testing.T) {
	setLandlock(t, 0, errors.New("cannot confine: this Linux kernel has no Landlock"))
	h := newHarness(t)
	out := h.ok("servers", "add", "fs", "--confine", "--", "mcp-server-filesystem")
	if !strings.Contains(out, "warning: cannot confine: this Linux kernel has no Landlock; fs will not be started") {
		t.Errorf("servers add said %q", out)
	}
	out = h.ok("servers", "add", "open", "--", "mcp-server-filesystem")
	if !strings.Contains(out, "note: cannot confine: this Linux kernel has no Landlock; open runs unconfined here") {
		t.Errorf("servers add said %q", out)
	}
	if got := h.status().server("fs").Confinement; got != "cannot confine: this Linux kernel has no Landlock; the server is not started" {
		t.Errorf("confinement %q", got)
	}
	if got := h.status().server("open").Confinement; got != "not confined here (this Linux kernel has no Landlock); roots are advice to this server" {
		t.Errorf("confinement %q", got)
	}
}

// TestLiveABIWins: a running app's status reports the ABI the server was
// actually started under.
func TestLiveABIWins(t *testing.T) {
	setLandlock(t, 7, nil)
	srv := app.Server{Name: "fs", Type: app.TransportStdio, Command: "x", Confine: true}
	if got := confinement(srv, &app.ServerStatus{LandlockABI: 5}); got != app.ConfinedText(5) {
		t.Errorf("confinement %q", got)
	}
	srv.Type, srv.Command, srv.URL = app.TransportHTTP, "", "https://example.com"
	if got := confinement(srv, nil); got != NotConfined {
		t.Errorf("a remote server: %q", got)
	}
}

// TestConfineFailureInStatusAndTheWayOut: a confined server that stopped
// after reaching past its folders shows in status with both ways out;
// `servers unconfine` runs it unconfined (a decision, in the audit log)
// and the failure goes; `servers confine` undoes it, as asked for in so
// many words.
func TestConfineFailureInStatusAndTheWayOut(t *testing.T) {
	setLandlock(t, 7, nil)
	h := newHarness(t)
	h.ok("servers", "add", "dc", "--", "desktop-commander")
	st, err := app.OpenStore(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	own := "/home/me/.claude-server-commander"
	if _, err := st.Update(func(s *app.State) error {
		s.RecordConfineFailure(app.ConfineFailure{Server: "dc", Tried: own, Op: app.OpMkdir, Folder: own, Own: true})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	text := h.ok("status")
	for _, want := range []string{
		"dc wants to keep its own settings in " + own + ", and stopped while confined",
		"allow " + own + " for dc, or run it unconfined\n" +
			"    allow " + own + " for dc (it alone): rootkeeper grant dc " + own + "\n" +
			"    run it unconfined: rootkeeper servers unconfine dc\n",
		"its own data: " + h.dir + "/data/dc, ~/.claude-server-commander, ~/.claude-server-commander-logs\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q:\n%s", want, text)
		}
	}
	if f := h.status().server("dc").Failure; f == nil || f.Folder != own {
		t.Errorf("status --json failure %+v", f)
	}
	if out := h.ok("servers", "unconfine", "dc"); !strings.Contains(out, "dc runs unconfined from its next start") {
		t.Errorf("servers unconfine said %q", out)
	}
	state, _ := st.Load()
	if srv, _ := state.Server("dc"); srv.Confine || len(state.ConfineFailures) != 0 {
		t.Errorf("after unconfine: %+v, failures %+v", srv, state.ConfineFailures)
	}
	h.ok("servers", "confine", "dc")
	state, _ = st.Load()
	if srv, _ := state.Server("dc"); !srv.Confine || !srv.ConfineRequired {
		t.Errorf("after confine: %+v", srv)
	}
	entries, err := audit.Read(h.dir, "dc")
	if err != nil || len(entries) != 2 || entries[0].Via != audit.ViaConfinement || entries[0].Decided != audit.ConfinedOff ||
		entries[1].Decided != audit.ConfinedOn || entries[0].Op != string(app.ByCommandLine) {
		t.Errorf("audit: %v %+v", err, entries)
	}
	h.fails(2, []string{"servers", "unconfine", "nope"}, `"nope"`)
}
