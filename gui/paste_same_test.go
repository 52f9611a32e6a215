package gui

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/widget"
	"github.com/google/go-cmp/cmp"

	"rootkeeper/app"
	"rootkeeper/app/cli"
	"rootkeeper/app/hosts"
)

// TestOneEntryOneServer: the same server entry, pasted into the window,
// imported with `rootkeeper import` and read from a host's file by `hosts`,
// is the same server (its name aside, and its environment, which a host
// keeps in its file, taken from there). One reader of entries serves all
// three; a second one, or a shape one of them does not know, fails this.
func TestOneEntryOneServer(t *testing.T) {
	for _, c := range []struct {
		host, file, entry string
	}{
		{"gemini", `{"mcpServers": {"s": ENTRY}}`, `{"httpUrl": "https://h.example/mcp", "headers": {"X-Team": "blue"}}`},
		{"windsurf", `{"mcpServers": {"s": ENTRY}}`, `{"serverUrl": "https://h.example/mcp"}`},
		{"claude-code", `{"numStartups": 1, "mcpServers": {"s": ENTRY}}`, `{"type": "sse", "url": "https://h.example/sse"}`},
		{"cursor", `{"mcpServers": {"s": ENTRY}}`, `{"command": "npx", "args": ["-y", "pkg", 8080, true], "env": {"LOG": "1", "GONE": null}, "cwd": "/srv/mcp"}`},
		{"vscode", "// mine\n{\"servers\": {\"s\": ENTRY,},}", "{\"type\": \"stdio\", \"command\": \"uvx\", // the time server\n \"args\": [\"mcp-server-time\",],}"},
		{"roo", `{"mcpServers": {"s": ENTRY}}`, `{"type": "streamable-http", "url": "https://h.example/mcp", "headers": {"X-API-Key": "k1"}}`},
		{"opencode", `{"mcp": {"s": ENTRY}}`, `{"type": "local", "command": ["npx", "-y", "pkg"], "environment": {"LOG": "1"}}`},
		{"opencode", `{"mcp": {"s": ENTRY}}`, `{"type": "remote", "url": "https://h.example/mcp", "oauth": false}`},
		{"copilot", `{"mcpServers": {"s": ENTRY}}`, `{"type": "local", "command": "npx", "args": ["pkg"], "tools": ["*"]}`},
		{"zed", `{"context_servers": {"s": ENTRY}}`, `{"command": {"path": "npx", "args": ["pkg"], "env": {"LOG": "1"}}, "settings": {}}`},
		// Goose's file is YAML, of which JSON is a part.
		{"goose", `{"extensions": {"s": ENTRY}}`, `{"cmd": "npx", "args": ["pkg"], "envs": {"LOG": "1"}, "type": "stdio", "enabled": true}`},
	} {
		t.Run(c.host+" "+c.entry, func(t *testing.T) {
			// What the entry says, less what storing a server adds: its
			// name in the state, its slots, and confinement (a stdio
			// server is confined by default once stored, whichever way
			// it came; hosts list reads the entry as written).
			norm := func(s app.Server) app.Server {
				s.Name, s.Slots = "", nil
				s.Confine, s.ConfineRequired = false, false
				s.DataProgram = "" // recorded when stored
				s.Network = nil    // Rootkeeper's default, set when stored
				return s
			}

			// Read by hosts from the host's file.
			home := t.TempDir()
			w := hosts.World{GOOS: "linux", Home: home, XDGConfigHome: filepath.Join(home, ".config")}
			h, _ := hosts.Lookup(c.host)
			path := h.Files(w)[0]
			os.MkdirAll(filepath.Dir(path), 0o755)
			file := bytes.ReplaceAll([]byte(c.file), []byte("ENTRY"), []byte(c.entry))
			if err := os.WriteFile(path, file, 0o600); err != nil {
				t.Fatal(err)
			}
			store, err := app.OpenStore(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			found, err := hosts.List(hosts.Options{World: w, Store: store})
			if err != nil || len(found) != 1 || len(found[0].Files) != 1 || len(found[0].Files[0].Entries) != 1 {
				t.Fatalf("hosts list: %+v %v", found, err)
			}
			e := found[0].Files[0].Entries[0]
			if e.Skip != "" {
				t.Fatalf("hosts cannot protect it: %s", e.Skip)
			}
			fromHost := e.Server
			fromHost.Env = e.HostEnv
			fromHost = norm(fromHost)
			if fromHost.Type == "" {
				t.Fatalf("hosts read nothing: %+v", e)
			}

			// Imported.
			dir := t.TempDir()
			cfg := filepath.Join(dir, "config.json")
			os.WriteFile(cfg, []byte(`{"mcpServers": {"s": `+c.entry+`}}`), 0o600)
			var out, errOut bytes.Buffer
			if code := cli.Run(context.Background(), []string{"--state-dir", filepath.Join(dir, "state"), "import", cfg},
				cli.Env{Stdout: &out, Stderr: &errOut, Cwd: dir, Home: home}, cli.Extensions{}); code != 0 {
				t.Fatalf("import: exit %d: %s", code, errOut.String())
			}
			imported, err := app.OpenStore(filepath.Join(dir, "state"))
			if err != nil {
				t.Fatal(err)
			}
			st, err := imported.Load()
			if err != nil {
				t.Fatal(err)
			}
			fromImport, _ := st.Server("s")

			// Pasted into the window, as one entry cut out of a file.
			f := newFixture(t, Options{Home: home}, nil)
			d := &pasteDialog{OnImport: f.u.servers.importServers}
			d.Show(f.win)
			d.text.SetText(`"s": ` + c.entry)
			d.dlg.Confirm()
			fromPaste, _ := f.core.Snapshot().State.Server("s")

			if diff := cmp.Diff(fromHost, norm(fromImport)); diff != "" {
				t.Errorf("import differs from hosts (-hosts +import):\n%s", diff)
			}
			if diff := cmp.Diff(fromHost, norm(fromPaste)); diff != "" {
				t.Errorf("paste differs from hosts (-hosts +paste):\n%s\npreview: %s", diff, d.preview.Text)
			}
		})
	}
}

// The preview says what a paste takes (Gemini CLI's httpUrl among them)
// and what it leaves out and why; a paste of nothing Rootkeeper can run
// adds nothing.
func TestPasteSaysWhatItLeavesOut(t *testing.T) {
	f := newFixture(t, Options{}, nil)
	d := &pasteDialog{OnImport: f.u.servers.importServers}
	d.Show(f.win)
	d.text.SetText(`{"mcpServers": {"web": {"httpUrl": "https://web.example.com/mcp"}, "off": {"command": "x", "disabled": true},
	  "api": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${input:token}"}}}}`)
	for _, want := range []string{"Found 1 server:", "• web: http https://web.example.com/mcp", "Left out:",
		"• off: it is turned off there", "• api: \"Bearer ${input:token}\" uses a variable only the host expands"} {
		if !strings.Contains(d.preview.Text, want) {
			t.Errorf("preview %q lacks %q", d.preview.Text, want)
		}
	}
	d.dlg.Confirm()
	if names := f.core.Snapshot().ServerNames(); !slices.Equal(names, []string{"web"}) {
		t.Errorf("servers after paste: %q", names)
	}

	d = &pasteDialog{OnImport: f.u.servers.importServers}
	d.Show(f.win)
	d.text.SetText(`"off": {"command": "y", "enabled": false}`)
	if d.preview.Importance != widget.WarningImportance || strings.Contains(d.preview.Text, "Found") {
		t.Errorf("preview of nothing to add: %q (%v)", d.preview.Text, d.preview.Importance)
	}
	d.dlg.Confirm()
	if names := f.core.Snapshot().ServerNames(); !slices.Equal(names, []string{"web"}) {
		t.Errorf("servers after a paste of nothing: %q", names)
	}
}
