package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"rootkeeper/app"
)

// Import reads every host's shape (Gemini CLI's httpUrl, opencode's mcp,
// Goose's cmd), says what it leaves out and why, and refuses a file with
// nothing to import, or a hostile one, with one line and exit 2, keeping
// what was saved.
func TestImportEveryShapeAndSaysWhatItSkips(t *testing.T) {
	h := newHarness(t)
	cfg := `{
  "mcpServers": {
    "web": {"httpUrl": "https://web.example.com/mcp"},
    "gh": {"cmd": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "envs": {"LOG": "1"}, "type": "stdio"},
    "oc": {"type": "local", "command": ["npx", "-y", "pkg"]},
    "ws": {"command": "mcp-ws", "args": ["${workspaceFolder}"]},
    "off": {"command": "x", "disabled": true}
  }
}`
	os.WriteFile(filepath.Join(h.cwd, "all.json"), []byte(cfg), 0o644)
	out := h.ok("import", "all.json")
	for _, want := range []string{
		"imported 3 server(s)", "web: http https://web.example.com/mcp", "gh: runs npx -y @modelcontextprotocol/server-github · env LOG", "oc: runs npx -y pkg",
		`skipped ws: "${workspaceFolder}" uses a variable only the host expands`, "skipped off: it is turned off there",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("import said:\n%s\nwithout %q", out, want)
		}
	}
	var servers []app.Server
	json.Unmarshal([]byte(h.ok("servers", "list", "--json")), &servers)
	var names []string
	for _, s := range servers {
		names = append(names, s.Name+":"+s.Type)
	}
	if want := []string{"gh:stdio", "oc:stdio", "web:http"}; !slices.Equal(names, want) {
		t.Errorf("servers %q, want %q", names, want)
	}

	os.WriteFile(filepath.Join(h.cwd, "none.json"), []byte(`{"mcpServers": {"ws": {"command": "mcp-ws", "args": ["${workspaceFolder}"]}}}`), 0o644)
	h.fails(2, []string{"import", "none.json"}, "none.json: no server to import: ws:", "only the host expands")
	os.WriteFile(filepath.Join(h.cwd, "deep.json"), []byte(strings.Repeat("[", 5<<20)), 0o644)
	h.fails(2, []string{"import", "deep.json"}, "deep.json: not an MCP server config: line 1: nested more than 10000 levels deep")
	os.WriteFile(filepath.Join(h.cwd, "case.json"), []byte(`{"mcpServers": {"x": {"command": "safe", "Command": "evil"}}}`), 0o644)
	h.fails(2, []string{"import", "case.json"}, `case.json: server "x": the key "Command" is "command" in another case`)
	os.WriteFile(filepath.Join(h.cwd, "long.json"), []byte(`{"mcpServers": {"x": {"command": "x", "args": ["`+strings.Repeat("a", 10<<20)+`"]}}}`), 0o644)
	h.fails(2, []string{"import", "long.json"}, `long.json: server "x": "args"[0] is 10485760 bytes long`)
}
