package serverentry

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"rootkeeper/app"
)

// names lists what Parse found: servers as NAME:TYPE, skipped as -NAME.
func names(cfg Config) []string {
	var out []string
	for _, s := range cfg.Servers {
		out = append(out, s.Name+":"+s.Type)
	}
	for _, s := range cfg.Skipped {
		out = append(out, "-"+s.Name)
	}
	return out
}

func TestParseShapes(t *testing.T) {
	for _, c := range []struct {
		name, config string
		want         []string
	}{
		{"Claude Desktop, Cursor, Claude Code: mcpServers",
			`{"mcpServers": {"b": {"command": "x"}, "a": {"url": "https://h/mcp"}}, "numStartups": 3}`,
			[]string{"a:http", "b:stdio"}},
		{"VS Code's mcp.json: servers, with comments and trailing commas",
			"// mine\n{\"inputs\": [], \"servers\": {\"a\": {\"type\": \"sse\", \"url\": \"https://h/sse\",},},}",
			[]string{"a:sse"}},
		{"VS Code's settings.json: mcp.servers",
			`{"editor.fontSize": 12, "mcp": {"inputs": [], "servers": {"a": {"command": "x"}}}}`,
			[]string{"a:stdio"}},
		{"opencode and Crush: mcp",
			`{"$schema": "https://opencode.ai/config.json", "mcp": {"a": {"type": "local", "command": ["x"]}, "b": {"type": "remote", "url": "https://h/mcp"}}}`,
			[]string{"a:stdio", "b:http"}},
		{"opencode: a server called servers is a server",
			`{"mcp": {"servers": {"type": "local", "command": ["x"]}}}`,
			[]string{"servers:stdio"}},
		{"Zed: context_servers",
			`{"theme": "One", "context_servers": {"a": {"command": {"path": "x", "args": []}, "settings": {}}}}`,
			[]string{"a:stdio"}},
		{"Amp: amp.mcpServers",
			`{"amp.mcpServers": {"a": {"command": "x"}}}`,
			[]string{"a:stdio"}},
		{"Continue: a list of servers that name themselves",
			`{"mcpServers": [{"name": "a", "command": "x"}, {"name": "b", "url": "https://h/mcp"}]}`,
			[]string{"a:stdio", "b:http"}},
		{"the servers alone",
			`{"a": {"command": "x"}}`,
			[]string{"a:stdio"}},
		{"one entry cut out of a file, without braces",
			`"a": {"httpUrl": "https://h/mcp"}`,
			[]string{"a:http"}},
		{"a byte order mark (Windows Notepad)",
			"\ufeff{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}",
			[]string{"a:stdio"}},
		{"what Rootkeeper cannot run is left out, with the others taken",
			`{"mcpServers": {"a": {"command": "x"}, "off": {"command": "x", "disabled": true}, "on": {"command": "x", "enabled": false},
			  "ws": {"command": "x", "args": ["${workspaceFolder}"]}, "tok": {"command": "x", "env": {"T": "${input:token}"}},
			  "mine": {"command": "/opt/rootkeeper", "args": ["bridge", "cc.mine"]}, "dev": {"type": "builtin"}}}`,
			[]string{"a:stdio", "-off", "-on", "-ws", "-tok", "-mine", "-dev"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(c.config))
			if err != nil {
				t.Fatal(err)
			}
			if got := names(cfg); !slices.Equal(got, c.want) {
				t.Errorf("found %q, want %q", got, c.want)
			}
		})
	}
}

// A skipped entry says why, in words a person can act on.
func TestParseSaysWhyItSkips(t *testing.T) {
	cfg, err := Parse([]byte(`{"mcpServers": {"tok": {"command": "x", "env": {"GITHUB_TOKEN": "${input:token}", "LOG": "1"}},
	  "off": {"command": "x", "disabled": true}, "mine": {"command": "/opt/rootkeeper", "args": ["bridge", "cc.mine"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"tok":  `env "GITHUB_TOKEN" ("${input:token}") uses a variable only the host expands`,
		"off":  "turned off",
		"mine": `bridge for "cc.mine"`,
	}
	for _, s := range cfg.Skipped {
		if !strings.Contains(s.Why, want[s.Name]) {
			t.Errorf("%s skipped because %q, want %q", s.Name, s.Why, want[s.Name])
		}
	}
	if len(cfg.Skipped) != len(want) {
		t.Errorf("skipped %+v", cfg.Skipped)
	}
}

func TestParseRefusesWithOneLine(t *testing.T) {
	for _, c := range []struct{ name, config, want string }{
		{"not JSON", "{\n\"mcpServers\": {\n", "line 3"},
		{"not an object", `[1]`, "the top level is an array"},
		{"no servers", `{"theme": 1}`, "no servers found"},
		{"one entry without its name", `{"command": "npx", "args": ["-y", "x"]}`, "without its name"},
		{"a table that is not an object", `{"mcpServers": "x"}`, `"mcpServers" is a string`},
		{"a server given twice", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, `server "a" is given twice`},
		{"a malformed entry names it", `{"mcpServers": {"x": {"command": 5}}}`, `server "x": "command" is a number`},
		{"ValidateServer's errors name it", `{"mcpServers": {"x": {"url": "ftp://h"}}}`, `invalid url "ftp://h" for server "x"`},
		{"a list item without a name", `{"mcpServers": [{"command": "x"}]}`, "mcpServers[0] has no name"},
		{"a bad roots mode", `{"mcpServers": {"x": {"command": "x", "rootsMode": "all"}}}`, `invalid roots mode "all"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.config))
			var ie *app.InputError
			if !errors.As(err, &ie) || ie.ExitCode() != 2 {
				t.Fatalf("error %v, want an input error", err)
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line with %q", err, c.want)
			}
		})
	}
}

// An mcpServers entry states no sampling mode of Rootkeeper's: one written
// anyway is not taken.
func TestImportLeavesSamplingAtDefault(t *testing.T) {
	cfg, err := Parse([]byte(`{"mcpServers": {"e": {"command": "x", "sampling": "off"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 1 || cfg.Servers[0].Sampling != "" {
		t.Errorf("imported %+v, want the default sampling mode", cfg.Servers)
	}
}

func TestOnlyRootkeeperIsABridge(t *testing.T) {
	for cmd, want := range map[string]bool{
		"/usr/local/bin/rootkeeper":       true,
		`C:\Program Files\rootkeeper.exe`: true,
		"/usr/bin/other-tool":             false,
		"rootkeeper-helper":               false,
	} {
		if got := isRootkeeper(cmd) && isBridge([]string{"bridge", "x"}); got != want {
			t.Errorf("%q bridge x: %v, want %v", cmd, got, want)
		}
	}
	if isBridge([]string{"--state-dir", "/s", "x", "bridge", "y"}) || isBridge([]string{"bridge"}) {
		t.Error("odd argument lists taken for a bridge")
	}
}

// A config written by a Windows editor starts with a byte order mark and
// ends its lines with CRLF; it imports as any other.
func TestParseAfterAByteOrderMarkAndCRLF(t *testing.T) {
	cfg, err := Parse([]byte("\ufeff{\r\n  \"mcpServers\": {\r\n    \"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"x\"]}\r\n  }\r\n}\r\n"))
	if err != nil || len(cfg.Servers) != 1 || cfg.Servers[0].Name != "fs" || cfg.Servers[0].Command != "npx" {
		t.Fatalf("%+v %v", cfg, err)
	}
}
