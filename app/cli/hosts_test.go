package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rootkeeper/app/hosts"
)

// hostsHarness points `hosts` at a home of the test's and a fake
// executable path.
func hostsHarness(t *testing.T) (*harness, string) {
	h := newHarness(t)
	home := t.TempDir()
	system := t.TempDir() // the administrator's /etc, never the machine's
	world, exe := HostsWorld, HostsExecutable
	HostsWorld = func() hosts.World {
		return hosts.World{GOOS: "linux", Home: home, XDGConfigHome: filepath.Join(home, ".config"), System: system}
	}
	HostsExecutable = func() (string, error) { return "/usr/local/bin/rootkeeper", nil }
	t.Cleanup(func() { HostsWorld, HostsExecutable = world, exe })
	return h, home
}

func TestHostsVerbs(t *testing.T) {
	h, home := hostsHarness(t)
	if out := h.ok("hosts", "list"); !strings.Contains(out, "no MCP host config found") {
		t.Errorf("list of nothing: %q", out)
	}
	cursor := filepath.Join(home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(cursor), 0o755)
	orig := "{\n  // mine\n  \"mcpServers\": {\n    \"time\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]}\n  }\n}\n"
	os.WriteFile(cursor, []byte(orig), 0o600)

	out := h.ok("hosts", "protect", "cursor", "--dry-run")
	if !strings.Contains(out, "time would be bridged as cursor.time: runs uvx mcp-server-time") {
		t.Errorf("dry run said %q", out)
	}
	if data, _ := os.ReadFile(cursor); string(data) != orig {
		t.Fatal("dry run wrote the file")
	}

	out = h.ok("hosts", "protect", "--all")
	if !strings.Contains(out, "time bridged as cursor.time") || !strings.Contains(out, "backup: ") {
		t.Errorf("protect said %q", out)
	}
	data, _ := os.ReadFile(cursor)
	want := `"command": "/usr/local/bin/rootkeeper", "args": ["--state-dir", "` + h.dir + `", "bridge", "cursor.time"]`
	if !strings.Contains(string(data), want) || !strings.Contains(string(data), "// mine") {
		t.Errorf("protected file:\n%s\nwant %s", data, want)
	}
	if out := h.ok("servers", "list"); !strings.Contains(out, "cursor.time") {
		t.Errorf("servers list after protect: %q", out)
	}

	var found []hosts.Found
	if err := json.Unmarshal([]byte(h.ok("hosts", "list", "--json")), &found); err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].ID != "cursor" || found[0].Servers != 1 || found[0].Protected != 1 || found[0].Files[0].ChangedSinceProtect ||
		found[0].Files[0].Entries[0].Program != "runs /usr/local/bin/rootkeeper --state-dir "+h.dir+" bridge cursor.time" {
		t.Errorf("list --json: %+v", found)
	}
	if out := h.ok("hosts", "list"); !strings.Contains(out, "protected as cursor.time") {
		t.Errorf("list: %q", out)
	}

	out = h.ok("hosts", "restore", "cursor")
	if !strings.Contains(out, "restored byte for byte") {
		t.Errorf("restore said %q", out)
	}
	if data, _ := os.ReadFile(cursor); string(data) != orig {
		t.Errorf("restore gave back:\n%s", data)
	}
	if out := h.ok("hosts", "restore", "cursor"); !strings.Contains(out, "nothing to restore") {
		t.Errorf("second restore said %q", out)
	}
}

func TestHostsBadInput(t *testing.T) {
	h, home := hostsHarness(t)
	h.fails(2, []string{"hosts"}, "list, protect or restore")
	h.fails(2, []string{"hosts", "frobnicate"}, `"frobnicate"`)
	h.fails(2, []string{"hosts", "protect"}, "HOST|--all")
	h.fails(2, []string{"hosts", "protect", "emacs"}, `"emacs"`, "claude-code")
	h.fails(2, []string{"hosts", "protect", "cursor", "--all"}, `"cursor"`)
	h.fails(2, []string{"hosts", "list", "--project", filepath.Join(home, "nope")}, "nope")
	h.fails(2, []string{"hosts", "list", "extra"}, `"extra"`)

	// A file that does not parse: exit 2 naming it, untouched.
	zed := filepath.Join(home, ".config", "zed", "settings.json")
	os.MkdirAll(filepath.Dir(zed), 0o755)
	garbage := "{\"context_servers\": {\"a\": {\"command\": \"x\"\n"
	os.WriteFile(zed, []byte(garbage), 0o600)
	h.fails(2, []string{"hosts", "protect", "zed"}, zed)
	if data, _ := os.ReadFile(zed); string(data) != garbage {
		t.Error("an unparseable file was written")
	}
	if out := h.ok("hosts", "list"); !strings.Contains(out, "does not parse") {
		t.Errorf("list does not say the file is broken: %q", out)
	}
}

func TestHostsProjectFile(t *testing.T) {
	h, _ := hostsHarness(t)
	proj := h.folder("api")
	file := filepath.Join(proj, ".vscode", "mcp.json")
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(`{"servers": {"db": {"type": "stdio", "command": "db-mcp"}}}`), 0o600)
	out := h.ok("hosts", "protect", "vscode", "--project", proj)
	if !strings.Contains(out, "db bridged as vscode.api-") {
		t.Fatalf("protect --project said %q", out)
	}
	data, _ := os.ReadFile(file)
	if !strings.Contains(string(data), `"bridge", "vscode.api-`) || !strings.Contains(string(data), `"type": "stdio"`) {
		t.Errorf("project file:\n%s", data)
	}
}

// TestHostsKnownProjects: the project files of every root Rootkeeper knows
// are listed under their project and protected with --all.
func TestHostsKnownProjects(t *testing.T) {
	h, _ := hostsHarness(t)
	api, web := h.folder("api"), h.folder("web")
	h.ok("roots", "add", api)
	h.ok("roots", "add", web)
	files := map[string]string{
		filepath.Join(api, ".mcp.json"):           `{"mcpServers": {"db": {"command": "db-mcp"}}}`,
		filepath.Join(api, ".cursor", "mcp.json"): `{"mcpServers": {"lint": {"command": "lint-mcp"}}}`,
		filepath.Join(web, "opencode.json"):       `{"mcp": {"fs": {"type": "local", "command": ["fs-mcp", "--ro"]}}}`,
		filepath.Join(web, ".roo", "mcp.json"):    `{"mcpServers": {"roo": {"command": "roo-mcp"}}}`,
	}
	for p, text := range files {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o600)
	}
	out := h.ok("hosts", "list")
	apiAt, webAt := strings.Index(out, "project "+api+"\n"), strings.Index(out, "project "+web+"\n")
	if apiAt < 0 || webAt < 0 {
		t.Fatalf("list does not group by project:\n%s", out)
	}
	for p := range files {
		if !strings.Contains(out, p) {
			t.Errorf("list misses %s:\n%s", p, out)
		}
	}
	if i := strings.Index(out, filepath.Join(web, "opencode.json")); i < webAt {
		t.Errorf("web's opencode.json is not under web:\n%s", out)
	}
	out = h.ok("hosts", "protect", "--all")
	for _, name := range []string{"db", "lint", "fs", "roo"} {
		if !strings.Contains(out, name+" bridged as ") {
			t.Errorf("protect --all did not bridge %s:\n%s", name, out)
		}
	}
	for p := range files {
		if data, _ := os.ReadFile(p); !strings.Contains(string(data), `"bridge"`) {
			t.Errorf("%s not protected:\n%s", p, data)
		}
	}
	h.ok("hosts", "restore", "--all")
	for p, text := range files {
		if data, _ := os.ReadFile(p); string(data) != text {
			t.Errorf("%s not restored:\n%s", p, data)
		}
	}
}

func TestHostsListKnown(t *testing.T) {
	h, home := hostsHarness(t)
	codex := filepath.Join(home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(codex), 0o755)
	os.WriteFile(codex, nil, 0o600)
	var known []hosts.Known
	if err := json.Unmarshal([]byte(h.ok("hosts", "list", "--known", "--json")), &known); err != nil {
		t.Fatal(err)
	}
	if len(known) != len(hosts.Hosts) {
		t.Errorf("%d hosts known, want %d", len(known), len(hosts.Hosts))
	}
	out := h.ok("hosts", "list", "--known")
	for _, want := range []string{codex + " (found)", filepath.Join(home, ".cursor", "mcp.json") + " (not found)", "in each project: .vscode/mcp.json"} {
		if !strings.Contains(out, want) {
			t.Errorf("--known misses %q:\n%s", want, out)
		}
	}
}

// TestHostsManagedByTheOrganisation: Claude Code's managed-mcp.json and
// managed-settings.json, which an administrator puts in /etc/claude-code,
// are listed as the organisation's — their servers managed, the host's
// allow and deny lists shown — and protect leaves them be, byte for byte,
// while it protects the person's own file.
func TestHostsManagedByTheOrganisation(t *testing.T) {
	h, home := hostsHarness(t)
	system := HostsWorld().System
	managed := filepath.Join(system, "etc", "claude-code", "managed-mcp.json")
	settings := filepath.Join(system, "etc", "claude-code", "managed-settings.json")
	os.MkdirAll(filepath.Dir(managed), 0o755)
	orig := `{"mcpServers": {"company-docs": {"command": "npx", "args": ["-y", "@company/docs-mcp"]}}}`
	os.WriteFile(managed, []byte(orig), 0o644)
	os.WriteFile(settings, []byte(`{"deniedMcpServers": [{"serverName": "filesystem"}], "allowedMcpServers": [{"serverCommand": ["npx", "-y", "@company/*"]}]}`), 0o644)
	user := filepath.Join(home, ".claude.json")
	os.WriteFile(user, []byte(`{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}`), 0o600)

	out := h.ok("hosts", "list")
	for _, want := range []string{
		managed + " — your organisation's (managed): protect leaves it be; the host loads only these servers",
		"company-docs", "managed by your organisation",
		`denied {"serverName":"filesystem"} (the host's own list, managed)`,
		`allowed {"serverCommand":["npx","-y","@company/*"]}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("hosts list lacks %q:\n%s", want, out)
		}
	}
	h.ok("hosts", "protect", "claude-code")
	if data, _ := os.ReadFile(managed); string(data) != orig {
		t.Errorf("protect rewrote the organisation's file:\n%s", data)
	}
	if data, _ := os.ReadFile(user); !strings.Contains(string(data), "bridge") {
		t.Errorf("protect left the person's own file:\n%s", data)
	}
	var found []hosts.Found
	json.Unmarshal([]byte(h.ok("hosts", "list", "--json")), &found)
	for _, f := range found {
		if f.ID == "claude-code" && f.Managed != 1 {
			t.Errorf("managed servers counted %d, want 1", f.Managed)
		}
	}
}
