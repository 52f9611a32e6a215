package gui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"rootkeeper/app/hosts"
)

// under calls fn for o and every object below it (cards and containers).
func under(o fyne.CanvasObject, fn func(fyne.CanvasObject)) {
	fn(o)
	switch w := o.(type) {
	case *widget.Card:
		under(w.Content, fn)
	case *fyne.Container:
		for _, c := range w.Objects {
			under(c, fn)
		}
	}
}

// labels gathers the text of every label under o.
func labels(o fyne.CanvasObject) string {
	var b strings.Builder
	under(o, func(o fyne.CanvasObject) {
		if l, ok := o.(*widget.Label); ok {
			b.WriteString(l.Text + "\n")
		}
	})
	return b.String()
}

// checks gathers the check boxes under o, by text.
func checks(o fyne.CanvasObject) map[string]*widget.Check {
	out := map[string]*widget.Check{}
	under(o, func(o fyne.CanvasObject) {
		if c, ok := o.(*widget.Check); ok {
			out[c.Text] = c
		}
	})
	return out
}

// buttons gathers the buttons under o, by text.
func buttons(o fyne.CanvasObject) map[string]*widget.Button {
	out := map[string]*widget.Button{}
	under(o, func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok {
			out[b.Text] = b
		}
	})
	return out
}

// The Hosts tab finds Cursor's config, protects its server (the file now
// runs the bridge, Rootkeeper has the server) and restores the file byte
// for byte.
func TestHostsTab(t *testing.T) {
	f := newFixture(t, Options{}, nil)
	home := t.TempDir()
	f.u.hostsOptions = func() hosts.Options {
		return hosts.Options{World: hosts.World{GOOS: "linux", Home: home, XDGConfigHome: filepath.Join(home, ".config")},
			Store: f.core.Store(), Executable: "/usr/bin/rootkeeper"}
	}
	f.u.selectTab("Hosts")
	if got := labels(f.u.hosts.list); !strings.Contains(got, "No MCP host config found") {
		t.Fatalf("with no host: %q", got)
	}

	cursor := filepath.Join(home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(cursor), 0o755)
	orig := "{\n  \"mcpServers\": {\n    \"time\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]}\n  }\n}\n"
	os.WriteFile(cursor, []byte(orig), 0o600)
	f.u.hosts.reload()
	got := labels(f.u.hosts.list)
	// The config file is named from home, as people write it.
	for _, want := range []string{"Cursor", "1 server, 0 protected", "~/.cursor/mcp.json", "time · user · can see folders without asking you"} {
		if !strings.Contains(got, want) {
			t.Fatalf("tab does not show %q:\n%s", want, got)
		}
	}
	b := buttons(f.u.hosts.list)
	if b["Restore"] == nil || !b["Restore"].Disabled() || b["Protect"].Disabled() {
		t.Fatalf("buttons before protect: %+v", b)
	}

	test.Tap(b["Protect"])
	data, _ := os.ReadFile(cursor)
	if !strings.Contains(string(data), `"command": "/usr/bin/rootkeeper", "args": ["bridge", "cursor.time"]`) {
		t.Fatalf("after Protect:\n%s", data)
	}
	if _, ok := f.core.Snapshot().State.Server("cursor.time"); !ok {
		t.Error("Protect did not add the server")
	}
	if f.u.hosts.result == nil {
		t.Error("no word on what Protect did")
	}
	// It says which file, from home; Enter closes it.
	said := ""
	for _, o := range test.LaidOutObjects(f.win.Canvas().Overlays().Top()) {
		if l, ok := o.(*widget.Label); ok {
			said += l.Text + "\n"
		}
	}
	if !strings.Contains(said, "~/.cursor/mcp.json\n") {
		t.Errorf("Protect said:\n%s", said)
	}
	typeKey(f.win.Canvas(), fyne.KeyReturn)
	if f.win.Canvas().Overlays().Top() != nil {
		t.Error("Enter did not close the result")
	}
	got = labels(f.u.hosts.list)
	if !strings.Contains(got, "1 server, 1 protected") || !strings.Contains(got, "protected (cursor.time)") {
		t.Fatalf("after Protect the tab shows:\n%s", got)
	}
	b = buttons(f.u.hosts.list)
	if !b["Protect"].Disabled() || b["Restore"].Disabled() {
		t.Fatal("buttons after protect")
	}
	// Cursor asks again for a changed entry: the tab says so.
	if !strings.Contains(got, "Cursor asks you to approve a server again once its entry changed") {
		t.Errorf("the tab does not warn of Cursor's prompt:\n%s", got)
	}
	// Keep protected: recorded for the host's files, shown again on reload.
	keep := checks(f.u.hosts.list)["Keep protected"]
	if keep == nil || keep.Disabled() || keep.Checked {
		t.Fatalf("the Keep protected switch after protect: %+v", keep)
	}
	test.Tap(keep)
	found, err := hosts.List(f.u.hostsOptions())
	if err != nil || len(found) != 1 || !found[0].Files[0].Kept {
		t.Fatalf("after ticking Keep protected: %+v %v", found, err)
	}
	if keep := checks(f.u.hosts.list)["Keep protected"]; keep == nil || !keep.Checked {
		t.Error("the switch does not show the host kept")
	}

	test.Tap(b["Restore"])
	if data, _ := os.ReadFile(cursor); string(data) != orig {
		t.Fatalf("after Restore:\n%s", data)
	}
}

// The guided start: asked once when hosts have unprotected servers; yes
// protects them all and the folders on their command lines are slots, asked
// about (each a request until answered).
func TestHostsGuidedStart(t *testing.T) {
	f := newFixture(t, Options{}, nil)
	home := t.TempDir()
	f.u.hostsOptions = func() hosts.Options {
		return hosts.Options{World: hosts.World{GOOS: "linux", Home: home, XDGConfigHome: filepath.Join(home, ".config")},
			Store: f.core.Store(), Executable: "/usr/bin/rootkeeper"}
	}
	f.u.guideHosts()
	if f.u.hosts.guide != nil {
		t.Fatal("asked with no host")
	}
	proj := filepath.Join(home, "proj")
	os.MkdirAll(proj, 0o755)
	for _, p := range []struct{ path, text string }{
		{filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"fs": {"command": "fs-mcp", "args": ["` + proj + `"]}}}`},
		{filepath.Join(home, ".claude.json"), `{"mcpServers": {"a": {"command": "a-mcp"}, "b": {"command": "b-mcp"}}}`},
	} {
		os.MkdirAll(filepath.Dir(p.path), 0o755)
		os.WriteFile(p.path, []byte(p.text), 0o600)
	}
	f.u.guideHosts()
	if f.u.hosts.guide == nil {
		t.Fatal("not asked")
	}
	f.u.hosts.guide.Confirm()
	st := f.core.Snapshot().State
	for _, name := range []string{"cursor.fs", "claude-code.a", "claude-code.b"} {
		if _, ok := st.Server(name); !ok {
			t.Errorf("%s not protected", name)
		}
	}
	if len(st.Requests) != 1 || st.Requests[0].Server != "cursor.fs" {
		t.Errorf("requests after the guided start: %+v", st.Requests)
	}
	f.u.hosts.guide = nil
	f.u.guideHosts()
	if f.u.hosts.guide != nil {
		t.Error("asked again")
	}
	if got := joinNames([]string{"Claude Code", "Cursor", "Zed"}); got != "Claude Code, Cursor and Zed" {
		t.Error(got)
	}
}
