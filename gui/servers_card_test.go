package gui

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/app/policy"
)

// cardOf is what the card of server shows: its text, line by line, and its
// Confine switch (nil when it has none).
func cardOf(t *testing.T, f *fixture, server string) (string, *widget.Check) {
	t.Helper()
	i := slices.IndexFunc(f.core.Snapshot().State.Servers, func(s app.Server) bool { return s.Name == server })
	if i < 0 {
		t.Fatalf("no server %q", server)
	}
	var b strings.Builder
	var check *widget.Check
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.Label:
			b.WriteString(w.Text + "\n")
		case *pathLabel:
			b.WriteString(w.Text + "\n")
		case *widget.Check:
			if w.Text == "Confine" {
				check = w
			}
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		}
	}
	walk(f.u.servers.list.Objects[2*i])
	return b.String(), check
}

func abi(n int) func() (int, error) { return func() (int, error) { return n, nil } }

func TestCardSaysWhetherTheServerIsConfined(t *testing.T) {
	noLandlock := errors.New("cannot confine: this Linux kernel has no Landlock")
	for _, tc := range []struct {
		name     string
		landlock func() (int, error)
		kernel   func() (int, error) // the kernel's own ABI; nil: unknown
		srv      app.Server
		live     int // the ABI the running server was started under
		want     string
		switchOn bool
		disabled bool
		noSwitch bool
	}{
		{name: "confined, not yet started", landlock: abi(4), srv: app.Server{Confine: true},
			want: app.ConfinedText(4), switchOn: true},
		{name: "confined, running", landlock: abi(6), srv: app.Server{Confine: true}, live: 5,
			want: app.ConfinedText(5), switchOn: true},
		{name: "confined at a capped ABI", landlock: abi(2), kernel: abi(7), srv: app.Server{Confine: true},
			want: app.CappedConfinedText(2, 7), switchOn: true},
		{name: "confined at the kernel's ABI", landlock: abi(7), kernel: abi(7), srv: app.Server{Confine: true},
			want: app.ConfinedText(7), switchOn: true},
		{name: "running at a capped ABI", landlock: abi(7), kernel: abi(7), srv: app.Server{Confine: true}, live: 3,
			want: app.CappedConfinedText(3, 7), switchOn: true},
		{name: "not confined", landlock: abi(4), srv: app.Server{},
			want: "not confined: roots are advice to this server"},
		{name: "no Landlock: cannot be turned on", landlock: func() (int, error) { return 0, noLandlock }, srv: app.Server{},
			want: "not confined: roots are advice to this server (cannot confine: this Linux kernel has no Landlock)", disabled: true},
		{name: "no Landlock support built in", srv: app.Server{},
			want: "not confined: roots are advice to this server (cannot confine: this build of Rootkeeper has no Landlock support)", disabled: true},
		{name: "no Landlock, confined by default: runs unconfined, and says so", landlock: func() (int, error) { return 0, noLandlock }, srv: app.Server{Confine: true},
			want: "not confined here (this Linux kernel has no Landlock); roots are advice to this server", switchOn: true},
		{name: "no Landlock, confinement asked for: not started, can still be turned off", landlock: func() (int, error) { return 0, noLandlock },
			srv: app.Server{Confine: true, ConfineRequired: true}, want: "cannot confine: this Linux kernel has no Landlock; the server is not started", switchOn: true},
		{name: "remote", landlock: abi(4), srv: app.Server{Type: app.TransportHTTP, URL: "https://example.com/mcp"},
			want: "not confined: roots are advice to this server", noSwitch: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.srv
			srv.Name = "fs"
			if srv.Type == "" {
				srv.Type, srv.Command = app.TransportStdio, "mcp-server-filesystem"
			}
			f := newFixture(t, Options{Landlock: tc.landlock, LandlockKernel: tc.kernel}, func(s *app.State) error { return s.AddServer(srv) })
			if tc.live > 0 {
				f.core.SetServerStatus("fs", app.ServerStatus{State: app.ServerConnected, LandlockABI: tc.live})
				f.u.refresh()
			}
			text, check := cardOf(t, f, "fs")
			if !strings.Contains(text, tc.want+"\n") {
				t.Errorf("card says\n%s\nwant a line %q", text, tc.want)
			}
			if tc.noSwitch {
				if check != nil {
					t.Error("a remote server's card has a Confine switch")
				}
				return
			}
			if check == nil {
				t.Fatal("no Confine switch")
			}
			if check.Checked != tc.switchOn || check.Disabled() != tc.disabled {
				t.Errorf("switch on %t disabled %t, want on %t disabled %t", check.Checked, check.Disabled(), tc.switchOn, tc.disabled)
			}
		})
	}
}

// The switch changes the server in the state file, keeping its decisions
// (the same program); the card then says so.
func TestConfineSwitch(t *testing.T) {
	f := newFixture(t, Options{Landlock: abi(4)}, func(s *app.State) error {
		if err := s.AddRoot(fakeRoot("/home/ada/src/alpha", true)); err != nil {
			return err
		}
		if err := s.AddServer(stdio("fs")); err != nil {
			return err
		}
		return s.Decide(allow("fs", "/home/ada/src/alpha"))
	})
	_, check := cardOf(t, f, "fs")
	test.Tap(check)
	st, err := f.core.Store().Load()
	if err != nil {
		t.Fatal(err)
	}
	if srv, _ := st.Server("fs"); !srv.Confine {
		t.Errorf("after turning Confine on, the stored server is %+v", srv)
	}
	f.wantDecisions("fs /home/ada/src/alpha allow always command-line")
	text, check := cardOf(t, f, "fs")
	if !strings.Contains(text, app.ConfinedText(4)+"\n") || !check.Checked {
		t.Errorf("after turning Confine on, the card says\n%s(switch on: %t)", text, check.Checked)
	}

	test.Tap(check)
	if srv, _ := f.core.Snapshot().State.Server("fs"); srv.Confine {
		t.Errorf("after turning Confine off, the server is %+v", srv)
	}
	if text, _ := cardOf(t, f, "fs"); !strings.Contains(text, app.NotConfined+"\n") {
		t.Errorf("after turning Confine off, the card says\n%s", text)
	}
}

// A failed write puts the switch back and says why.
func TestConfineSwitchFailure(t *testing.T) {
	f := newFixture(t, Options{Landlock: abi(4)}, func(s *app.State) error { return s.AddServer(stdio("fs")) })
	_, check := cardOf(t, f, "fs")
	// The server goes behind the card's back (as `servers remove` would).
	if err := f.core.Update(func(s *app.State) error { return s.RemoveServer("fs") }); err != nil {
		t.Fatal(err)
	}
	test.Tap(check)
	if check.Checked {
		t.Error("the switch stayed on after a failed write")
	}
	if top := f.win.Canvas().Overlays().Top(); top == nil {
		t.Error("no error dialog")
	}
}

func TestCardWarnsOfKeptArguments(t *testing.T) {
	f := newFixture(t, Options{}, func(s *app.State) error {
		srv := stdio("fs")
		srv.Args, srv.KeepArgs = []string{"/srv/templates"}, []string{"/srv/templates"}
		return s.AddServer(srv)
	})
	text, _ := cardOf(t, f, "fs")
	want := "Kept on its command line: /srv/templates — if it is a folder, the server sees it without asking.\n"
	if !strings.Contains(text, want) {
		t.Errorf("card says\n%s\nwant %q", text, want)
	}
}

// A server added in the window has the folders on its command line taken
// off: they are requests, which the card lists in the words of status.
func TestAddServerKeepsFoldersAsSlots(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, Options{}, nil)
	form := &serverForm{OnSave: f.u.servers.save(false)}
	form.Show(f.win)
	test.Type(form.name, "fs")
	test.Type(form.command, "mcp-server-filesystem")
	test.Type(form.args, "--verbose\n"+dir)
	form.dlg.Confirm()
	st := f.core.Snapshot().State
	srv, ok := st.Server("fs")
	if !ok || !slices.Equal(srv.Args, []string{"--verbose", dir}) || len(srv.Slots) != 1 {
		t.Fatalf("server after the form: %+v (found %t)", srv, ok)
	}
	canon, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := st.Request("fs", canon); !ok || r.From != app.FromCommandLine {
		t.Errorf("requests after the form: %+v", st.Requests)
	}
	text, _ := cardOf(t, f, "fs")
	for _, want := range []string{"Waiting for your answer: fs is configured with " + canon + "\n",
		"Configured with " + canon + " (--verbose): waiting for your decision\n",
		"Not started: waiting for your decision on " + canon} {
		if !strings.Contains(text, want) {
			t.Errorf("card says\n%s\nwant %q", text, want)
		}
	}
}

// Editing a server in the form keeps what the form does not show: its
// confinement, host-roots mode and kept arguments.
func TestEditKeepsConfinement(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, Options{Landlock: abi(4)}, func(s *app.State) error {
		srv := stdio("fs")
		srv.Confine, srv.HostRoots = true, app.HostRootsFollow
		srv.Args, srv.KeepArgs = []string{dir}, []string{dir}
		return s.AddServer(srv)
	})
	old, _ := f.core.Snapshot().State.Server("fs")
	form := &serverForm{Server: old, Editing: true, OnSave: f.u.servers.save(true)}
	form.Show(f.win)
	form.sampling.SetSelected(string(app.SamplingOff))
	form.dlg.Confirm()
	srv, _ := f.core.Snapshot().State.Server("fs")
	if !srv.Confine || srv.HostRoots != app.HostRootsFollow || !slices.Equal(srv.KeepArgs, []string{dir}) ||
		!slices.Equal(srv.Args, []string{dir}) || srv.Sampling != app.SamplingOff {
		t.Errorf("after the edit: %+v", srv)
	}
	if len(f.core.Snapshot().State.Requests) != 0 {
		t.Errorf("a kept argument became a request: %+v", f.core.Snapshot().State.Requests)
	}
}

// buttonsOf are the card's buttons by their text.
func buttonsOf(f *fixture, i int) map[string]*widget.Button {
	out := map[string]*widget.Button{}
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.Button:
			out[w.Text] = w
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		}
	}
	walk(f.u.servers.list.Objects[2*i])
	return out
}

// A confined server that stopped after reaching past its folders: its
// card says what it reached for in words and where it keeps its own
// data, and offers the way out; Allow makes its own settings folder and
// allows it (a decision), Run it unconfined turns confinement off (in the
// audit log), and the line goes.
func TestCardOffersTheWayOutOfAConfinedFailure(t *testing.T) {
	home := t.TempDir()
	own := filepath.Join(home, ".claude-server-commander")
	for _, action := range []string{"Allow ~/.claude-server-commander for dc", "Run it unconfined"} {
		t.Run(action, func(t *testing.T) {
			f := newFixture(t, Options{Landlock: abi(7), Home: home}, func(s *app.State) error {
				srv := stdio("dc")
				srv.Command, srv.Confine = "/x/node_modules/.bin/desktop-commander", true
				if err := s.AddServer(srv); err != nil {
					return err
				}
				s.RecordConfineFailure(app.ConfineFailure{Server: "dc", Tried: own, Op: app.OpMkdir, Folder: own, Own: true})
				return nil
			})
			text, _ := cardOf(t, f, "dc")
			for _, want := range []string{
				"dc wants to keep its own settings in ~/.claude-server-commander, and stopped while confined — allow ~/.claude-server-commander for dc, or run it unconfined\n",
				"Its own settings and data: " + f.dir + "/data/dc, ~/.claude-server-commander, ~/.claude-server-commander-logs\n",
			} {
				if !strings.Contains(text, want) {
					t.Errorf("card says\n%s\nwant %q", text, want)
				}
			}
			b := buttonsOf(f, 0)[action]
			if b == nil {
				t.Fatalf("no button %q", action)
			}
			test.Tap(b)
			st := f.core.Snapshot().State
			if _, ok := st.ConfineFailureOf("dc"); ok {
				t.Errorf("the failure is still shown after %q", action)
			}
			srv, _ := st.Server("dc")
			if action == "Run it unconfined" {
				entries, err := audit.Read(f.dir, "dc")
				if srv.Confine || err != nil || len(entries) != 1 || entries[0].Decided != audit.ConfinedOff || entries[0].Op != string(app.ByWindow) {
					t.Errorf("after %q: %+v, audit %v %+v", action, srv, err, entries)
				}
				return
			}
			if fi, err := os.Stat(own); err != nil || !fi.IsDir() || !srv.Confine {
				t.Errorf("after %q: folder %v, server %+v", action, err, srv)
			}
			// Its own folder, for it alone: in its ruleset, no root.
			if n, ok := st.Need("dc", own); !ok || n.Access != app.NeedReadWrite || n.By != app.ByWindow {
				t.Errorf("after %q: need %+v %v", action, n, ok)
			}
			if _, isRoot := st.Root(own); isRoot || len(st.Decisions) != 0 {
				t.Errorf("after %q: a root or a decision: %+v %+v", action, st.Roots, st.Decisions)
			}
			if text, _ := cardOf(t, f, "dc"); !strings.Contains(text, "Needs to run: ~/.claude-server-commander (read-write, for it alone)\n") {
				t.Errorf("after %q the card says\n%s", action, text)
			}
			test.Tap(buttonsOf(f, 0)["Take away ~/.claude-server-commander"])
			if _, ok := f.core.Snapshot().State.Need("dc", own); ok {
				t.Errorf("Take away left the need")
			}
		})
	}
}

// A server whose command came to run another program: its card names the
// data folder kept aside, and gives it to the program it runs now, or
// removes it once asked.
func TestCardOffersTheKeptData(t *testing.T) {
	for _, action := range []string{"Give it to mem", "Remove it…"} {
		t.Run(action, func(t *testing.T) {
			f := newFixture(t, Options{Landlock: abi(7)}, nil)
			data := filepath.Join(f.dir, "data", "mem")
			put := func(pkg string) {
				srv := stdio("mem")
				srv.Command, srv.Args, srv.Confine = "npx", []string{"-y", pkg}, true
				if err := f.core.Update(func(s *app.State) error {
					_, err := s.PutServer(srv, app.PutOptions{Replace: true, StateDir: f.dir})
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			put("@modelcontextprotocol/server-memory@1")
			os.MkdirAll(data, 0o700)
			os.WriteFile(filepath.Join(data, "memory.jsonl"), []byte("graph"), 0o600)
			put("other-memory")
			f.u.refresh()
			srv, _ := f.core.Snapshot().State.Server("mem")
			if len(srv.KeptData) != 1 {
				t.Fatalf("kept %+v", srv.KeptData)
			}
			kept, _ := app.KeptDataFolder(f.dir, "mem", srv.KeptData[0].Name)
			text, _ := cardOf(t, f, "mem")
			if want := "Kept aside: the data of npm @modelcontextprotocol/server-memory, in " + kept; !strings.Contains(text, want) {
				t.Errorf("card says\n%s\nwant %q", text, want)
			}
			test.Tap(buttonsOf(f, 0)[action])
			if action == "Remove it…" {
				if f.win.Canvas().Overlays().Top() == nil {
					t.Fatal("no confirmation")
				}
				if _, err := os.Stat(kept); err != nil {
					t.Fatalf("removed before it was confirmed: %v", err)
				}
				typeKey(f.win.Canvas(), fyne.KeyReturn) // Remove
				if _, err := os.Stat(kept); !os.IsNotExist(err) {
					t.Errorf("the kept folder is still there: %v", err)
				}
			} else if b, err := os.ReadFile(filepath.Join(data, "memory.jsonl")); err != nil || string(b) != "graph" {
				t.Errorf("the data folder after %q: %q %v", action, b, err)
			}
			if srv, _ := f.core.Snapshot().State.Server("mem"); len(srv.KeptData) != 0 {
				t.Errorf("still kept after %q: %+v", action, srv.KeptData)
			}
		})
	}
}

// Where the organisation requires confinement, the card's Confine switch
// of a confined server does not offer turning it off, and says who set it;
// and the reach dialog offers no Allow once where the organisation allows
// lasting decisions only.
func TestCardAndDialogShowWhatThePolicySets(t *testing.T) {
	old := app.Policy()
	t.Cleanup(func() { app.SetPolicy(old) })
	no := false
	app.SetPolicy(policy.Policy{Source: "/etc/rootkeeper/policy.json", RequireConfinement: true, AllowOnce: &no})
	f := newFixture(t, Options{Landlock: abi(4)}, func(s *app.State) error {
		srv := stdio("fs")
		srv.Confine = true
		return s.AddServer(srv)
	})
	text, check := cardOf(t, f, "fs")
	if !check.Disabled() || !strings.Contains(text, app.ByPolicy) {
		t.Errorf("the card under requireConfinement says\n%s(switch disabled: %v)", text, check.Disabled())
	}
	r := reachFixture(t, reachAt, call("c1", app.OpRead, "secret.txt", ""))
	d := openRequest(t, r)
	if !d.once.Disabled() || !strings.Contains(d.note.Text, app.ByPolicy) || d.once.Importance == widget.HighImportance {
		t.Errorf("the reach dialog where allow once is off: once disabled %v, note %q", d.once.Disabled(), d.note.Text)
	}
}

// A server's card says what the organisation's policy sets for it, in the
// words of status, and which folders the person allowed it that the policy
// never grants; a policy that changes while the window is up changes the
// card with it.
func TestCardSaysWhatTheOrganisationSets(t *testing.T) {
	old := app.Policy()
	t.Cleanup(func() { app.SetPolicy(old) })
	app.SetPolicy(policy.Policy{})
	f := newFixture(t, Options{Landlock: abi(4)}, func(s *app.State) error {
		srv := stdio("fs")
		srv.Confine = true
		if err := s.AddServer(srv); err != nil {
			return err
		}
		for _, r := range []string{"/home/ada/src", "/home/ada/keys"} {
			if err := s.AddRoot(fakeRoot(r, true)); err != nil {
				return err
			}
			if err := s.Decide(allow("fs", r)); err != nil {
				return err
			}
		}
		return nil
	})
	if text, _ := cardOf(t, f, "fs"); strings.Contains(text, "organisation") {
		t.Fatalf("a card with no policy speaks of one:\n%s", text)
	}
	no := false
	f.core.SetPolicy(policy.Policy{Source: "/etc/rootkeeper/policy.json", RequireConfinement: true, AllowOnce: &no,
		NeverGrant: []string{"/home/ada/keys"}})
	f.u.refresh()
	text, _ := cardOf(t, f, "fs")
	for _, want := range []string{
		"Set by your organisation: runs confined: required; no allow once: lasting decisions only",
		"Allowed by you, never granted by your organisation (/home/ada/keys): ~/keys",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the card under the policy lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "never granted by your organisation (/home/ada/keys): ~/src") {
		t.Errorf("a folder the policy leaves alone is set aside:\n%s", text)
	}
	f.core.SetPolicy(policy.Policy{})
	f.u.refresh()
	if text, _ := cardOf(t, f, "fs"); strings.Contains(text, "organisation") {
		t.Errorf("the card still speaks of a policy that is gone:\n%s", text)
	}
}
