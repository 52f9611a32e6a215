package hosts

import (
	"os"
	"path/filepath"
	"runtime"
)

// Format is how a config file is written.
type Format string

// The formats of hosts' config files.
const (
	JSON Format = "json" // JSON or JSONC (comments and trailing commas kept)
	TOML Format = "toml"
	YAML Format = "yaml"
)

// Host is one MCP host (an app that starts MCP servers) and where its
// configuration lives.
type Host struct {
	// ID is the short name used on the command line ("claude-code").
	ID string
	// Name is the name people know it by ("Claude Code").
	Name string
	// Format of its config files.
	Format Format
	// files returns the host's config files on this machine, in env's
	// world; a file listed need not exist.
	files func(w World) []string
	// project returns the per-project file for a folder ("DIR/.mcp.json"),
	// nil for hosts without one.
	project func(dir string) string
	// dialect says which keys hold what in a server entry.
	dialect dialect
	// servers finds the server tables in a parsed file: each is a path
	// of keys to an object whose members are server entries, with the
	// scope they stand for.
	servers func(d doc) []serverTable
}

// serverTable is one object of server entries inside a file.
type serverTable struct {
	key   []string // e.g. ["projects", "/home/me/x", "mcpServers"]
	scope string   // "user", "local /home/me/x", "project"
	tag   string   // part of Rootkeeper's names for them ("" or "x")
}

// World is what a host's paths depend on. Tests point Home and
// XDGConfigHome at a temporary folder.
type World struct {
	// GOOS is the operating system whose paths to use.
	GOOS string
	// Home is the person's home folder.
	Home string
	// XDGConfigHome is $XDG_CONFIG_HOME (Linux); empty means ~/.config.
	XDGConfigHome string
	// AppData is %APPDATA% (Windows).
	AppData string
	// Getenv reads other variables hosts honour (CLAUDE_CONFIG_DIR,
	// CODEX_HOME). Nil reads none.
	Getenv func(string) string
}

// ThisWorld is the running process's world, from its environment.
func ThisWorld() World {
	home, _ := os.UserHomeDir()
	return World{GOOS: runtime.GOOS, Home: home, XDGConfigHome: os.Getenv("XDG_CONFIG_HOME"),
		AppData: os.Getenv("APPDATA"), Getenv: os.Getenv}
}

func (w World) env(k string) string {
	if w.Getenv == nil {
		return ""
	}
	return w.Getenv(k)
}

// configDir is where apps that follow each OS's convention keep their
// settings: $XDG_CONFIG_HOME (~/.config) on Linux, Application Support on
// macOS, %APPDATA% on Windows.
func (w World) configDir() string {
	switch w.GOOS {
	case "darwin":
		return filepath.Join(w.Home, "Library", "Application Support")
	case "windows":
		if w.AppData != "" {
			return w.AppData
		}
		return filepath.Join(w.Home, "AppData", "Roaming")
	}
	if w.XDGConfigHome != "" && filepath.IsAbs(w.XDGConfigHome) {
		return w.XDGConfigHome
	}
	return filepath.Join(w.Home, ".config")
}

// xdgDir is ~/.config (or $XDG_CONFIG_HOME) on Linux and macOS, where
// command-line tools such as Zed and Goose keep their settings whatever the
// OS convention, and %APPDATA% on Windows.
func (w World) xdgDir() string {
	if w.GOOS == "windows" {
		return w.configDir()
	}
	if w.XDGConfigHome != "" && filepath.IsAbs(w.XDGConfigHome) {
		return w.XDGConfigHome
	}
	return filepath.Join(w.Home, ".config")
}

// vscodeUser is VS Code's user settings folder.
func (w World) vscodeUser() string { return filepath.Join(w.configDir(), "Code", "User") }

func one(p string) []string { return []string{p} }

// mcpServers is the common shape: a top-level "mcpServers" object.
func mcpServers(doc) []serverTable {
	return []serverTable{{key: []string{"mcpServers"}, scope: "user"}}
}

// Hosts is every host Rootkeeper knows, in the order they are listed. The
// paths follow each host's documentation; Linux paths are the tested ones.
var Hosts = []*Host{
	{
		ID: "claude-code", Name: "Claude Code", Format: JSON,
		files: func(w World) []string {
			if d := w.env("CLAUDE_CONFIG_DIR"); d != "" && filepath.IsAbs(d) {
				return one(filepath.Join(d, ".claude.json"))
			}
			return one(filepath.Join(w.Home, ".claude.json"))
		},
		project: func(dir string) string { return filepath.Join(dir, ".mcp.json") },
		dialect: jsonDialect,
		servers: func(d doc) []serverTable {
			out := []serverTable{{key: []string{"mcpServers"}, scope: "user"}}
			if d.isProject() {
				return []serverTable{{key: []string{"mcpServers"}, scope: "project", tag: projectTag(d.path())}}
			}
			for _, p := range d.keys([]string{"projects"}) {
				out = append(out, serverTable{key: []string{"projects", p, "mcpServers"}, scope: "local " + p, tag: baseTag(p)})
			}
			return out
		},
	},
	{
		ID: "claude-desktop", Name: "Claude Desktop", Format: JSON,
		files: func(w World) []string {
			return one(filepath.Join(w.configDir(), "Claude", "claude_desktop_config.json"))
		},
		dialect: jsonDialect, servers: mcpServers,
	},
	{
		ID: "cursor", Name: "Cursor", Format: JSON,
		files:   func(w World) []string { return one(filepath.Join(w.Home, ".cursor", "mcp.json")) },
		project: func(dir string) string { return filepath.Join(dir, ".cursor", "mcp.json") },
		dialect: jsonDialect,
		servers: func(d doc) []serverTable {
			if d.isProject() {
				return []serverTable{{key: []string{"mcpServers"}, scope: "project", tag: projectTag(d.path())}}
			}
			return mcpServers(d)
		},
	},
	{
		ID: "vscode", Name: "VS Code", Format: JSON,
		files:   func(w World) []string { return one(filepath.Join(w.vscodeUser(), "mcp.json")) },
		project: func(dir string) string { return filepath.Join(dir, ".vscode", "mcp.json") },
		dialect: jsonDialect,
		servers: func(d doc) []serverTable {
			if d.isProject() {
				return []serverTable{{key: []string{"servers"}, scope: "workspace", tag: projectTag(d.path())}}
			}
			return []serverTable{{key: []string{"servers"}, scope: "user"}}
		},
	},
	{
		ID: "windsurf", Name: "Windsurf", Format: JSON,
		files: func(w World) []string {
			return one(filepath.Join(w.Home, ".codeium", "windsurf", "mcp_config.json"))
		},
		dialect: jsonDialect, servers: mcpServers,
	},
	{
		ID: "gemini", Name: "Gemini CLI", Format: JSON,
		files:   func(w World) []string { return one(filepath.Join(w.Home, ".gemini", "settings.json")) },
		project: func(dir string) string { return filepath.Join(dir, ".gemini", "settings.json") },
		dialect: geminiDialect,
		servers: func(d doc) []serverTable {
			if d.isProject() {
				return []serverTable{{key: []string{"mcpServers"}, scope: "project", tag: projectTag(d.path())}}
			}
			return mcpServers(d)
		},
	},
	{
		ID: "zed", Name: "Zed", Format: JSON,
		files:   func(w World) []string { return one(filepath.Join(w.xdgDir(), "zed", "settings.json")) },
		dialect: zedDialect,
		servers: func(doc) []serverTable {
			return []serverTable{{key: []string{"context_servers"}, scope: "user"}}
		},
	},
	{
		ID: "codex", Name: "Codex", Format: TOML,
		files: func(w World) []string {
			if d := w.env("CODEX_HOME"); d != "" && filepath.IsAbs(d) {
				return one(filepath.Join(d, "config.toml"))
			}
			return one(filepath.Join(w.Home, ".codex", "config.toml"))
		},
		dialect: codexDialect,
		servers: func(doc) []serverTable {
			return []serverTable{{key: []string{"mcp_servers"}, scope: "user"}}
		},
	},
	{
		ID: "goose", Name: "Goose", Format: YAML,
		files: func(w World) []string {
			if w.GOOS == "windows" {
				return one(filepath.Join(w.configDir(), "Block", "goose", "config", "config.yaml"))
			}
			return one(filepath.Join(w.xdgDir(), "goose", "config.yaml"))
		},
		dialect: gooseDialect,
		servers: func(doc) []serverTable {
			return []serverTable{{key: []string{"extensions"}, scope: "user"}}
		},
	},
	{
		ID: "cline", Name: "Cline", Format: JSON,
		files: func(w World) []string {
			return one(filepath.Join(w.vscodeUser(), "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"))
		},
		dialect: jsonDialect, servers: mcpServers,
	},
}

// Lookup finds a host by its ID.
func Lookup(id string) (*Host, bool) {
	for _, h := range Hosts {
		if h.ID == id {
			return h, true
		}
	}
	return nil, false
}

// IDs lists the hosts' IDs, for error messages.
func IDs() []string {
	out := make([]string, len(Hosts))
	for i, h := range Hosts {
		out[i] = h.ID
	}
	return out
}

// Files returns the host's user config files in w (existing or not).
func (h *Host) Files(w World) []string { return h.files(w) }

// ProjectFile returns the host's per-project config file inside dir, and
// false for hosts that have none.
func (h *Host) ProjectFile(dir string) (string, bool) {
	if h.project == nil {
		return "", false
	}
	return h.project(dir), true
}
