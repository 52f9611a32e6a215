package gui

import (
	"context"
	"encoding/json"
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
	"rootkeeper/app/audit"
)

// demo is a state with a few roots and two servers, for the tab goldens.
func demo(s *app.State) error {
	if err := threeRoots(s); err != nil {
		return err
	}
	if err := s.UpdateRoot(rootA, func(r *app.Root) { r.Branch = "main" }); err != nil {
		return err
	}
	if err := s.SetEnabled(rootC, false); err != nil {
		return err
	}
	if err := s.Decide(allow("fs", rootA)); err != nil {
		return err
	}
	d := allow("fs", rootB)
	d.Verdict = app.Deny
	if err := s.Decide(d); err != nil {
		return err
	}
	s.SearchFolders = []string{"/home/ada/src", "/home/ada/work"}
	return nil
}

func demoFixture(t *testing.T, opts Options) *fixture {
	f := newFixture(t, opts, demo)
	f.core.SetHealth(rootA, app.Health{Status: app.HealthOK})
	f.core.SetHealth(rootB, app.Health{Status: app.HealthOK, Branch: "feature/tray"})
	f.core.SetHealth(rootC, app.Health{Status: app.HealthMissing, Err: "stat /home/ada/work/gamma: no such file or directory"})
	f.core.SetServerStatus("fs", app.ServerStatus{State: app.ServerConnected, ProtocolVersion: "2025-06-18",
		ServerName: "secure-filesystem-server", ServerVersion: "0.2.0"})
	f.core.SetServerStatus("git", app.ServerStatus{State: app.ServerFailed, Error: "exec: \"mcp-server-git\": executable file not found in $PATH"})
	f.u.refresh()
	return f
}

func TestRootsTab(t *testing.T) {
	f := demoFixture(t, Options{})
	f.assertMarkup("roots.xml")
	f.capture("roots.png")

	// Revoke from the per-folder view: fs's allow on alpha becomes not asked.
	row := f.u.roots.itemFor(rootA)
	if row == nil {
		t.Fatal("no row for alpha")
	}
	test.Tap(row.access)
	fv := f.u.folderView
	if fv == nil {
		t.Fatal("Access… opened no per-folder view")
	}
	for _, it := range fv.items {
		if it.server == "fs" {
			it.choice.SetSelected(accessLabels[app.AccessNotAsked])
		}
	}
	f.wantDecisions("git "+rootA+" allow always command-line", "fs "+rootB+" deny always command-line")
	if v := app.VisiblePaths(f.core.Snapshot(), "fs"); len(v) != 0 {
		t.Errorf("fs sees %q after the revoke", v)
	}
	// Turning a root off hides it from everyone.
	test.Tap(f.u.roots.itemFor(rootA).enabled)
	if r, _ := f.core.Snapshot().State.Root(rootA); r.Enabled {
		t.Error("alpha still enabled after unticking Enabled")
	}
}

func TestRootsTabEmpty(t *testing.T) {
	f := newFixture(t, Options{}, nil)
	f.assertMarkup("roots-empty.xml")
}

func TestDiscoverTab(t *testing.T) {
	scan := func(ctx context.Context, req app.ScanRequest, found func(app.Candidate), progress func(app.ScanProgress)) (app.ScanSummary, error) {
		if !slices.Equal(req.Dirs, []string{"/home/ada/src", "/home/ada/work"}) {
			t.Errorf("scan of %q, want the search folders", req.Dirs)
		}
		progress(app.ScanProgress{Visited: 10, Current: "/home/ada/src"})
		found(app.Candidate{Path: rootA, Kind: "repo", Branch: "main"})
		found(app.Candidate{Path: rootA + "/web", Kind: "project", Markers: []string{"package.json"}, Repo: rootA})
		found(app.Candidate{Path: rootA + "/vendor-sub", Kind: "repo", Submodule: true, Repo: rootA, Branch: "v2"})
		found(app.Candidate{Path: "/home/ada/src/delta", Kind: "project", Markers: []string{"go.mod"}})
		return app.ScanSummary{Visited: 42, Found: 4}, nil
	}
	f := demoFixture(t, Options{Scan: scan})
	f.u.selectTab("discover")
	test.Tap(f.u.discover.scanBtn)
	var got []string
	for _, r := range f.u.discover.rows {
		got = append(got, strings.Repeat("  ", r.Depth)+r.C.Path)
	}
	want := []string{rootA, "  " + rootA + "/vendor-sub", "  " + rootA + "/web", "/home/ada/src/delta"}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s := f.u.discover.status.Text; !strings.Contains(s, "42 folders visited, 4 found") {
		t.Errorf("status %q", s)
	}
	f.assertMarkup("discover.xml")
	f.capture("discover.png")

	test.Type(f.u.discover.filter, "package.json")
	if n := len(f.u.discover.rows); n != 2 {
		t.Errorf("filter kept %d rows, want alpha and its web project", n)
	}
}

// An idle window animates nothing: no running infinite progress bar
// anywhere, before a scan on any tab, and after one. (A Fyne infinite
// progress bar starts when its renderer is made, stopped and hidden or
// not, and redrew the window 60 times a second.)
func TestIdleWindowAnimatesNothing(t *testing.T) {
	scan := func(context.Context, app.ScanRequest, func(app.Candidate), func(app.ScanProgress)) (app.ScanSummary, error) {
		return app.ScanSummary{}, nil
	}
	f := demoFixture(t, Options{Scan: scan})
	running := func() int {
		n := 0
		var walk func(o fyne.CanvasObject)
		walk = func(o fyne.CanvasObject) {
			switch o := o.(type) {
			case *widget.ProgressBarInfinite:
				if o.Running() {
					n++
				}
			case *fyne.Container:
				for _, c := range o.Objects {
					walk(c)
				}
				return
			}
			if w, ok := o.(fyne.Widget); ok {
				for _, c := range test.WidgetRenderer(w).Objects() {
					walk(c)
				}
			}
		}
		walk(f.win.Content())
		return n
	}
	for _, tab := range []string{"roots", "access", "discover", "servers", "activity", "hosts"} {
		f.u.selectTab(tab)
		f.win.Content().Refresh()
		if n := running(); n != 0 {
			t.Fatalf("%d infinite progress bars running on the %s tab with no scan", n, tab)
		}
	}
	f.u.selectTab("discover")
	test.Tap(f.u.discover.scanBtn)
	f.win.Content().Refresh()
	if n := running(); n != 0 {
		t.Fatalf("%d infinite progress bars running after the scan ended", n)
	}
}

func TestDiscoverWithoutScanner(t *testing.T) {
	f := newFixture(t, Options{}, nil)
	f.u.selectTab("discover")
	if !f.u.discover.scanBtn.Disabled() {
		t.Error("Scan enabled without a scanner")
	}
	if !strings.Contains(f.u.discover.status.Text, "not available") {
		t.Errorf("status %q", f.u.discover.status.Text)
	}
}

func TestServersTab(t *testing.T) {
	// A kernel with Landlock: each stdio card's Confine switch can be
	// turned on.
	f := demoFixture(t, Options{Landlock: abi(6)})
	f.u.selectTab("servers")
	f.assertMarkup("servers.xml")
	f.capture("servers.png")
}

func TestPasteServers(t *testing.T) {
	f := newFixture(t, Options{}, nil)
	d := &pasteDialog{OnImport: f.u.servers.importServers}
	d.Show(f.win)
	test.Type(d.text, `"mcpServers": {"docs": {"url": "https://example.com/mcp"}, "fs": {"command": "npx", "args": ["-y", "evil pkg"], "env": {"TOKEN": "s3cret"}}}`)
	// The preview shows what each server runs before anything starts: the
	// command and its arguments, the names of its variables, never a value.
	for _, want := range []string{"Found 2 servers:", "docs: http https://example.com/mcp", "fs: runs npx -y 'evil pkg' · env TOKEN"} {
		if !strings.Contains(d.preview.Text, want) {
			t.Errorf("preview %q lacks %q", d.preview.Text, want)
		}
	}
	if strings.Contains(d.preview.Text, "s3cret") {
		t.Errorf("preview shows an env value: %q", d.preview.Text)
	}
	d.dlg.Confirm()
	names := f.core.Snapshot().ServerNames()
	if !slices.Equal(names, []string{"docs", "fs"}) {
		t.Errorf("servers after paste: %q", names)
	}
}

func TestServerForm(t *testing.T) {
	f := newFixture(t, Options{}, nil)
	form := &serverForm{OnSave: f.u.servers.save(false)}
	form.Show(f.win)
	test.Type(form.name, "fs")
	test.Type(form.command, "mcp-server-filesystem")
	test.Type(form.args, "--verbose")
	form.dlg.Confirm()
	srv, ok := f.core.Snapshot().State.Server("fs")
	if !ok || srv.Command != "mcp-server-filesystem" || !slices.Equal(srv.Args, []string{"--verbose"}) || srv.Type != app.TransportStdio {
		t.Errorf("server after the form: %+v (found %t)", srv, ok)
	}
}

// Editing a server keeps its sampling mode, and the form can change it.
func TestServerFormSampling(t *testing.T) {
	f := newFixture(t, Options{}, func(s *app.State) error {
		srv := stdio("fs")
		srv.Sampling = app.SamplingOff
		return s.AddServer(srv)
	})
	srv, _ := f.core.Snapshot().State.Server("fs")
	form := &serverForm{Server: srv, Editing: true, OnSave: f.u.servers.save(true)}
	form.Show(f.win)
	if form.sampling.Selected != string(app.SamplingOff) {
		t.Fatalf("form shows sampling %q, want off", form.sampling.Selected)
	}
	test.Type(form.args, "--verbose")
	form.dlg.Confirm()
	// New arguments make another program: the person is asked about its
	// decisions first.
	f.u.servers.programChanged.Confirm()
	if got, _ := f.core.Snapshot().State.Server("fs"); got.Sampling != app.SamplingOff || len(got.Args) != 1 {
		t.Errorf("after editing: %+v, want sampling still off", got)
	}
	srv, _ = f.core.Snapshot().State.Server("fs")
	form = &serverForm{Server: srv, Editing: true, OnSave: f.u.servers.save(true)}
	form.Show(f.win)
	form.sampling.SetSelected(string(app.SamplingReview))
	form.dlg.Confirm()
	if got, _ := f.core.Snapshot().State.Server("fs"); got.Sampling != "" {
		t.Errorf("after choosing review: sampling %q, want the default", got.Sampling)
	}
}

func TestActivityTab(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2025, 11, 21, 9, 30, 0, 0, time.UTC)
	var lines []string
	for i, e := range []auditEntry{
		{Time: base, Server: "fs", ProtocolVersion: "2025-06-18", Roots: []string{app.URIFromPath(rootA)}, Via: "roots/list"},
		{Time: base.Add(time.Minute), Server: "git", Error: "connection closed", Via: "roots/list"},
		{Time: base.Add(2 * time.Minute), Server: "fs", Roots: nil, Via: "roots/list"},
	} {
		data, _ := json.Marshal(e)
		lines = append(lines, string(data))
		_ = i
	}
	os.WriteFile(filepath.Join(dir, "audit.jsonl"), []byte(strings.Join(lines, "\n")+"\n{torn"), 0o600)
	f := demoFixture(t, Options{StateDir: dir})
	f.u.selectTab("activity")
	if n := len(f.u.activity.shown); n != 3 {
		t.Fatalf("%d entries shown, want 3", n)
	}
	if f.u.activity.shown[0].Time != base.Add(2*time.Minute) {
		t.Errorf("not newest first: %v", f.u.activity.shown[0].Time)
	}
	f.assertMarkup("activity.xml")
	f.capture("activity.png")
	f.u.activity.server.SetSelected("git")
	if n := len(f.u.activity.shown); n != 1 || f.u.activity.shown[0].Server != "git" {
		t.Errorf("server filter: %+v", f.u.activity.shown)
	}
	f.u.activity.server.SetSelected(allServers)
	test.Type(f.u.activity.filter, "alpha")
	if n := len(f.u.activity.shown); n != 1 {
		t.Errorf("text filter kept %d entries, want 1", n)
	}
}

// TestActivityFoldsAlikeAttempts: `#!/usr/bin/env node` looks for node in
// each folder of PATH, six attempts past a confined server's folders in a
// moment, none asked about. The tab says so in one line a start, with how
// many attempts and (in full) where; what raised a request, what was
// refused and what a server was told keep lines of their own, and Export
// still writes every entry.
func TestActivityFoldsAlikeAttempts(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC)
	search := []string{"/root/go/bin", "/root/.cargo/bin", "/root/.pyenv/shims", "/root/.pyenv/bin", "/usr/local/go/bin", "/snap/bin"}
	probe := func(at time.Time, folder string) auditEntry {
		return auditEntry{Time: at, Server: "everything", Roots: []string{}, Via: audit.ViaReach, Op: app.OpExecute, Tried: folder + "/node", Decided: audit.ReachIgnored}
	}
	var trail, noise []auditEntry
	trail = append(trail, auditEntry{Time: base, Server: "fs", Roots: []string{app.URIFromPath(rootA)}, Via: "roots/list"})
	for i, f := range search {
		noise = append(noise, probe(base.Add(time.Second+time.Duration(i)*10*time.Millisecond), f))
	}
	trail = append(trail, auditEntry{Time: base.Add(2 * time.Second), Server: "everything", Roots: []string{}, Via: audit.ViaReach, Op: app.OpRead, Tried: "/home/me/secret/a.txt", Decided: audit.ReachUnasked, Request: true})
	// The next start, a minute later: its own line. One entry stands for
	// four identical attempts (the noise file's coalescing).
	again := probe(base.Add(time.Minute), search[0])
	again.Repeated = 4
	noise = append(noise, again, probe(base.Add(time.Minute+10*time.Millisecond), search[1]))
	write := func(name string, entries []auditEntry) {
		var b strings.Builder
		for _, e := range entries {
			data, _ := json.Marshal(e)
			b.Write(append(data, '\n'))
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("audit.jsonl", trail)
	write("audit-noise.jsonl", noise)
	f := demoFixture(t, Options{StateDir: dir})
	f.u.selectTab("activity")
	a := f.u.activity
	if n := len(a.shown); n != 10 {
		t.Fatalf("%d entries kept, want all 10 (Export writes them)", n)
	}
	var got []string
	for _, r := range a.rows {
		got = append(got, r.entry().Server+": "+r.text(false))
	}
	want := []string{
		"everything: tried to run node 5 times: not asked",
		"everything: tried to read a.txt: unasked (raised a request)",
		"everything: tried to run node 6 times: not asked",
		"fs: got " + filepath.Base(rootA) + " (roots/list)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if full := a.rows[2].text(true); !strings.Contains(full, strings.Join([]string{"/snap/bin/node", "/usr/local/go/bin/node", "/root/.pyenv/bin/node", "/root/.pyenv/shims/node", "/root/.cargo/bin/node", "/root/go/bin/node"}, ", ")) {
		t.Errorf("the folded line in full does not name every path tried, newest first: %q", full)
	}
	test.Type(a.filter, "cargo")
	if n, rows := len(a.shown), len(a.rows); n != 2 || rows != 2 {
		t.Errorf("filtering by a folder tried kept %d entries in %d rows, want 2 in 2 (one a start)", n, rows)
	}
}

func TestConsentDialogGoldens(t *testing.T) {
	f := demoFixture(t, Options{})
	if err := f.core.Update(func(s *app.State) error { return s.SetEnabled(rootC, true) }); err != nil {
		t.Fatal(err)
	}
	f.core.SetHealth(rootC, app.Health{Status: app.HealthOK})
	f.connect("git")
	if _, ok := f.u.openDialog.(*reviewDialog); !ok {
		t.Fatalf("no review for git: %T", f.u.openDialog)
	}
	f.assertMarkup("dialog-review.xml")
	f.capture("dialog-review.png")
}

// The per-server view: every folder with its one switch for fs.
func TestAccessTab(t *testing.T) {
	f := demoFixture(t, Options{})
	f.u.selectTab("access")
	f.u.access.selectServer("fs")
	f.assertMarkup("access.xml")
	f.capture("access.png")
	// The switch of gamma (not asked) to allowed until quit.
	f.u.access.itemFor(rootC).choice.SetSelected(accessLabels[app.AccessUntilQuit])
	f.wantDecisions("git "+rootA+" allow always command-line", "fs "+rootA+" allow always command-line",
		"fs "+rootB+" deny always command-line", "fs "+rootC+" allow until-quit window")
	// Deny the rest, then allow all under /home/ada/src.
	f.u.access.selectServer("git")
	test.Tap(f.u.access.rest)
	f.u.access.allowUnder("git", "/home/ada/src")
	g := app.NewGrid(f.core.Snapshot())
	for path, want := range map[string]app.Access{rootA: app.AccessAllowed, rootB: app.AccessAllowed, rootC: app.AccessDenied} {
		if got := g.Access("git", path); got != want {
			t.Errorf("git on %s: %s, want %s", path, got, want)
		}
	}
	if d, _ := f.core.Snapshot().State.Decision("git", rootB); d.By != app.ByWindow {
		t.Errorf("a decision made in the window is recorded as by %q", d.By)
	}
	// The filter narrows the list.
	test.Type(f.u.access.filter, "gamma")
	if len(f.u.access.shown) != 1 || f.u.access.shown[0].Root.Path != rootC {
		t.Errorf("filter kept %+v", f.u.access.shown)
	}
}

func TestShareDialogGolden(t *testing.T) {
	f := demoFixture(t, Options{})
	// The home folder itself, with credentials inside: every warning.
	f.u.inspect = func(roots []app.Root, home string) []rootInfo {
		return []rootInfo{{Root: roots[0], Access: app.Health{Status: app.HealthOK}, Warnings: []string{
			"This is your home folder itself: documents, settings and keys would all be shared.",
			"It holds .ssh, where credentials are kept.",
		}}}
	}
	f.u.askShare(app.Root{Path: "/home/ada", Name: "ada", Source: app.SourcePicked}, true, []string{"fs", "git"})
	f.assertMarkup("dialog-share.xml")
	f.capture("dialog-share.png")
}

// A server whose edit changes what it runs is a new program for consent:
// the person sees the old and the new command, and its decisions are
// dropped unless they choose to keep them. An edit that leaves the program
// alone (its sampling mode) asks nothing and keeps them.
func TestEditingWhatAServerRunsAsksAboutItsDecisions(t *testing.T) {
	root := t.TempDir()
	f := newFixture(t, Options{}, func(s *app.State) error {
		if err := s.AddServer(stdio("fs")); err != nil {
			return err
		}
		if err := s.AddRoot(app.Root{Path: root, Name: "proj", Enabled: true, Source: app.SourcePicked}); err != nil {
			return err
		}
		return s.Decide(allow("fs", root))
	})
	decided := func() bool { _, ok := f.core.Snapshot().State.Decision("fs", root); return ok }
	edit := func(change func(*serverForm)) {
		t.Helper()
		f.u.servers.programChanged = nil
		srv, _ := f.core.Snapshot().State.Server("fs")
		form := &serverForm{Server: srv, Editing: true, OnSave: f.u.servers.save(true)}
		form.Show(f.win)
		change(form)
		form.dlg.Confirm()
	}

	edit(func(form *serverForm) { form.sampling.SetSelected(string(app.SamplingOff)) })
	if f.u.servers.programChanged != nil || !decided() {
		t.Fatalf("changing the sampling mode asked %v and kept the decision %t", f.u.servers.programChanged != nil, decided())
	}

	edit(func(form *serverForm) { form.command.SetText("npx"); form.args.SetText("evil-pkg") })
	d := f.u.servers.programChanged
	if d == nil {
		t.Fatal("a new command was saved without asking")
	}
	if _, ok := f.core.Snapshot().State.Server("fs"); !decided() || ok && f.core.Snapshot().State.Servers[0].Command != "mcp-server-fs" {
		t.Fatal("the server changed before the person answered")
	}
	d.Confirm() // Keep my choices
	if srv, _ := f.core.Snapshot().State.Server("fs"); srv.Command != "npx" || !decided() {
		t.Fatalf("keep my choices: server %+v, decision kept %t", srv, decided())
	}

	edit(func(form *serverForm) { form.args.SetText("other-pkg") })
	f.u.servers.programChanged.Dismiss() // Start fresh
	if srv, _ := f.core.Snapshot().State.Server("fs"); !slices.Equal(srv.Args, []string{"other-pkg"}) || decided() {
		t.Fatalf("start fresh: server %+v, decision kept %t", srv, decided())
	}
	if vis := app.VisiblePaths(f.core.Snapshot(), "fs"); len(vis) != 0 {
		t.Fatalf("the new program sees %q", vis)
	}
}

// The Activity tab reads the audit log again only when it changed, not on
// every status change (servers report many a second).
func TestActivityReadsTheLogOnlyWhenItChanged(t *testing.T) {
	f := newFixture(t, Options{}, nil)
	log := audit.NewLog(f.dir)
	defer log.Close()
	log.Append(audit.Entry{Server: "fs", Roots: []string{"file:///a"}, Via: audit.ViaRootsList})
	log.Close()
	reads := 0
	orig := readAudit
	readAudit = func(f *audit.Follower) ([]audit.Entry, error) { reads++; return orig(f) }
	defer func() { readAudit = orig }()
	f.u.selectTab("Activity")
	for i := range 50 {
		f.core.SetServerStatus("fs", app.ServerStatus{State: app.ServerConnected, Restarts: i})
		f.u.refresh()
	}
	if reads != 1 || len(f.u.activity.entries) != 1 {
		t.Fatalf("50 status changes read the log %d times (entries %d), want once", reads, len(f.u.activity.entries))
	}
	log.Append(audit.Entry{Server: "fs", Roots: []string{"file:///b"}, Via: audit.ViaRootsList})
	log.Close()
	f.core.SetServerStatus("fs", app.ServerStatus{State: app.ServerStopped})
	f.u.refresh()
	if reads != 2 || len(f.u.activity.entries) != 2 {
		t.Fatalf("after a new entry: %d reads, %d entries", reads, len(f.u.activity.entries))
	}
}

// TestActivityTextOfEveryLine: every kind of line the audit trail holds
// is said in words, not as a roots answer ("got no folders").
func TestActivityTextOfEveryLine(t *testing.T) {
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	cases := []struct {
		e    auditEntry
		want string
	}{
		{auditEntry{Via: audit.ViaReach, Op: app.OpTruncate, Tried: "/home/me/secret/a.txt", Decided: audit.ReachUnasked, Request: true}, "tried to empty and rewrite a.txt: unasked (raised a request)"},
		{auditEntry{Via: audit.ViaConfinement, Decided: audit.ConfinedOff, Op: "window"}, "run unconfined (by window)"},
		{auditEntry{Via: audit.ViaSummary, Since: at, Unwritten: map[string]int{audit.ReachIgnored: 1200}}, "1,200 not written since"},
		{auditEntry{Via: audit.ViaRootsList, Roots: []string{}}, "got no folders"},
	}
	for _, c := range cases {
		if got := activityText(c.e, false); !strings.Contains(got, c.want) {
			t.Errorf("%s line: %q, want %q in it", c.e.Via, got, c.want)
		}
	}
}

// The Activity tab filters off the UI goroutine (a full log is 200,000
// lines), and shows only the newest filter's result: typing "fs" then
// "git" shows git's lines even when the filter for "fs" ends last.
func TestActivityFiltersOffTheUIGoroutine(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2025, 11, 21, 9, 30, 0, 0, time.UTC)
	var lines []string
	for i, server := range []string{"fs", "git", "fs"} {
		data, _ := json.Marshal(auditEntry{Time: base.Add(time.Duration(i) * time.Minute), Server: server, Roots: []string{}, Via: "roots/list"})
		lines = append(lines, string(data))
	}
	os.WriteFile(filepath.Join(dir, "audit.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	f := demoFixture(t, Options{StateDir: dir})
	f.u.selectTab("activity")
	a := f.u.activity
	if len(a.shown) != 3 {
		t.Fatalf("%d lines shown, want 3", len(a.shown))
	}
	var jobs, results []func()
	f.u.async = func(fn func()) { jobs = append(jobs, fn) }
	f.u.do = func(fn func()) { results = append(results, fn) }
	a.filter.SetText("fs")
	a.filter.SetText("git")
	if len(jobs) != 2 || len(a.shown) != 3 {
		t.Fatalf("%d filters begun off the UI goroutine, %d lines shown; want 2 begun and the list as it was", len(jobs), len(a.shown))
	}
	jobs[1]()
	jobs[0]() // overtaken: it stops early
	if len(results) != 1 {
		t.Fatalf("%d filters gave a result, want only the newest", len(results))
	}
	results[0]()
	if len(a.shown) != 1 || a.shown[0].Server != "git" || len(a.rows) != 1 {
		t.Fatalf("after both filters ended: %d lines shown (%+v), want git's one", len(a.shown), a.shown)
	}
	// A filter that ended before the next began, its result given to the
	// UI goroutine after the next one's: the newest still shows.
	jobs, results = nil, nil
	a.filter.SetText("fs")
	jobs[0]()
	a.filter.SetText("git")
	jobs[1]()
	results[1]()
	results[0]()
	if len(a.shown) != 1 || a.shown[0].Server != "git" {
		t.Fatalf("after both filters ended: %d lines shown (%+v), want git's one", len(a.shown), a.shown)
	}
}

// Attempts on paths that do not exist (a Node server's start looking for
// node along PATH) are not shown unless asked for, and the footer counts
// them; shown, they read "not there", and Export writes what is shown.
func TestActivityHidesAttemptsOnMissingPaths(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)
	entries := []auditEntry{{Time: base, Server: "fs", Roots: []string{app.URIFromPath(rootA)}, Via: "roots/list"}}
	for i, folder := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/root/go/bin", "/snap/bin", "/opt/bin"} {
		entries = append(entries, auditEntry{Time: base.Add(time.Second + time.Duration(i)*time.Millisecond), Server: "fs", Roots: []string{},
			Via: audit.ViaReach, Op: app.OpExecute, Tried: folder + "/node", Decided: audit.ReachIgnored, Absent: true})
	}
	entries = append(entries, auditEntry{Time: base.Add(2 * time.Second), Server: "fs", Roots: []string{}, Via: audit.ViaReach,
		Op: app.OpRead, Tried: "/etc/ssl/private/key.pem", Decided: audit.ReachIgnored})
	var b strings.Builder
	for _, e := range entries {
		data, _ := json.Marshal(e)
		b.Write(append(data, '\n'))
	}
	os.WriteFile(filepath.Join(dir, audit.NoiseName), []byte(b.String()), 0o600)
	f := demoFixture(t, Options{StateDir: dir})
	f.u.selectTab("activity")
	a := f.u.activity
	lines := func() []string {
		var got []string
		for _, r := range a.rows {
			got = append(got, r.text(false))
		}
		return got
	}
	want := []string{"tried to read key.pem: not asked", "got " + filepath.Base(rootA) + " (roots/list)"}
	if got := lines(); !slices.Equal(got, want) || len(a.shown) != 2 {
		t.Errorf("by default: %q (%d entries), want %q", got, len(a.shown), want)
	}
	if got := a.status.Text; !strings.Contains(got, "8 lines in the log; 6 attempts on missing paths not shown") {
		t.Errorf("footer %q", got)
	}
	test.Tap(a.missing)
	want = []string{"tried to read key.pem: not asked", "tried to run node 6 times: not there", "got " + filepath.Base(rootA) + " (roots/list)"}
	if got := lines(); !slices.Equal(got, want) || len(a.shown) != 8 {
		t.Errorf("with missing paths: %q (%d entries), want %q", got, len(a.shown), want)
	}
	if got := a.status.Text; got != "8 lines in the log." {
		t.Errorf("footer %q with every line shown", got)
	}
}

// While the log is read the first time, the tab says so, not that there
// is no activity.
func TestActivitySaysItIsReading(t *testing.T) {
	dir := t.TempDir()
	data, _ := json.Marshal(auditEntry{Time: time.Now(), Server: "fs", Roots: []string{}, Via: "roots/list"})
	os.WriteFile(filepath.Join(dir, audit.FileName), append(data, '\n'), 0o600)
	f := demoFixture(t, Options{StateDir: dir})
	var jobs []func()
	f.u.async = func(fn func()) { jobs = append(jobs, fn) }
	f.u.selectTab("activity")
	a := f.u.activity
	if a.empty.Hidden || a.empty.Text != "Reading the activity log…" {
		t.Fatalf("while reading: %q (hidden %v)", a.empty.Text, a.empty.Hidden)
	}
	for len(jobs) > 0 {
		job := jobs[0]
		jobs = jobs[1:]
		job()
	}
	if !a.empty.Hidden || len(a.rows) != 1 {
		t.Fatalf("once read: %q (hidden %v), %d rows", a.empty.Text, a.empty.Hidden, len(a.rows))
	}
}
