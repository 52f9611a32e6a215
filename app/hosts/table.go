package hosts

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"rootkeeper/app/serverentry"
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
	// AsksAgain: the host asks the person to approve an entry again once
	// its content changed (Cursor), so protecting it brings that prompt.
	AsksAgain bool
	// Format of its config files (but a ".json" file of a YAML host is
	// JSON: Continue's block files).
	Format Format
	// files returns the host's user config files in w; a file listed
	// need not exist, and may be a glob (VS Code's profiles).
	files func(w World) []string
	// project returns the per-project files of a folder ("DIR/.mcp.json"),
	// which may be globs; nil for hosts without any.
	project func(dir string) []string
	// managed returns the files an administrator puts in the system's
	// place for the host (Claude Code's managed-mcp.json and
	// managed-settings.json): listed as the organisation's, never
	// protected or rewritten. nil for hosts without any.
	managed func(w World) []string
	// dialect says which keys hold what in a server entry.
	dialect serverentry.Dialect
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
	// System is where the system's own folders are (the files an
	// administrator puts in /etc): "" for the real ones; tests point it
	// at a temporary folder.
	System string
}

// system is the system-wide path p (absolute), under w.System.
func (w World) system(p string) string {
	if w.System == "" {
		return p
	}
	return filepath.Join(w.System, p)
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

// vscodeUser is the user settings folder of VS Code or one of its forks
// ("Code", "Code - Insiders", "VSCodium", "Trae").
func (w World) vscodeUser(app string) string { return filepath.Join(w.configDir(), app, "User") }

// dotDir is a folder a host keeps in the home folder (~/.gemini), or the
// folder the variable env names when it is set to an absolute path.
func (w World) dotDir(env, name string) string {
	if d := w.env(env); env != "" && d != "" && filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(w.Home, name)
}

// localAppData is %LOCALAPPDATA% on Windows.
func (w World) localAppData() string {
	if d := w.env("LOCALAPPDATA"); d != "" && filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(w.Home, "AppData", "Local")
}

func one(p string) []string { return []string{p} }

// in returns the files of a project: each name (a path relative to the
// project, slash-separated, globs allowed) inside dir.
func in(names ...string) func(dir string) []string {
	return func(dir string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = filepath.Join(dir, filepath.FromSlash(n))
		}
		return out
	}
}

// table returns the server tables of a host whose servers all sit in one
// top-level object (key): "user" scope in a user file, scope in a
// project's file.
func table(key, scope string) func(doc) []serverTable {
	return func(d doc) []serverTable {
		if d.isProject() {
			return []serverTable{{key: []string{key}, scope: scope, tag: baseTag(d.projectDir())}}
		}
		if profile := profileOf(d.path()); profile != "" {
			return []serverTable{{key: []string{key}, scope: "profile " + profile, tag: "profile-" + nameSafe(profile)}}
		}
		return []serverTable{{key: []string{key}, scope: "user"}}
	}
}

// profileOf is the VS Code profile a user file belongs to
// (.../User/profiles/ID/mcp.json), or "".
func profileOf(path string) string {
	dir := filepath.Dir(path)
	if filepath.Base(filepath.Dir(dir)) == "profiles" && filepath.Base(filepath.Dir(filepath.Dir(dir))) == "User" {
		return filepath.Base(dir)
	}
	return ""
}

// mcpServers is the common shape: a top-level "mcpServers" object.
var mcpServers = table("mcpServers", "project")

// vscodeFamily is a VS Code-like editor: mcp.json in its User folder and
// in each profile's folder.
func vscodeFamily(app string) func(w World) []string {
	return func(w World) []string {
		u := w.vscodeUser(app)
		return []string{filepath.Join(u, "mcp.json"), filepath.Join(u, "profiles", "*", "mcp.json")}
	}
}

// extensionFile is the settings file of a VS Code extension (Cline, Roo
// Code, Kilo Code) in VS Code's global storage.
func extensionFile(id, name string) func(w World) []string {
	return func(w World) []string {
		return one(filepath.Join(w.vscodeUser("Code"), "globalStorage", id, "settings", name))
	}
}

// Hosts is every host Rootkeeper knows, in the order they are listed. The
// paths follow each host's documentation; Linux paths are the tested ones.
var Hosts = []*Host{
	{
		ID: "claude-code", Name: "Claude Code", Format: JSON,
		files: func(w World) []string {
			return one(filepath.Join(w.dotDir("CLAUDE_CONFIG_DIR", ""), ".claude.json"))
		},
		managed: func(w World) []string {
			dir := w.system("/etc/claude-code")
			switch w.GOOS {
			case "darwin":
				dir = w.system("/Library/Application Support/ClaudeCode")
			case "windows":
				dir = `C:\Program Files\ClaudeCode`
				if w.System != "" {
					dir = filepath.Join(w.System, "ClaudeCode")
				}
			}
			return []string{filepath.Join(dir, "managed-mcp.json"), filepath.Join(dir, "managed-settings.json")}
		},
		project: in(".mcp.json"),
		dialect: serverentry.Common,
		servers: func(d doc) []serverTable {
			if d.isProject() {
				return []serverTable{{key: []string{"mcpServers"}, scope: "project", tag: baseTag(d.projectDir())}}
			}
			out := []serverTable{{key: []string{"mcpServers"}, scope: "user"}}
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
		dialect: serverentry.Common, servers: mcpServers,
	},
	{
		ID: "cursor", Name: "Cursor", Format: JSON, AsksAgain: true,
		files:   func(w World) []string { return one(filepath.Join(w.Home, ".cursor", "mcp.json")) },
		project: in(".cursor/mcp.json"),
		dialect: serverentry.Common, servers: mcpServers,
	},
	{
		ID: "vscode", Name: "VS Code", Format: JSON,
		files:   vscodeFamily("Code"),
		project: in(".vscode/mcp.json"),
		dialect: serverentry.Common, servers: table("servers", "workspace"),
	},
	{
		ID: "vscode-insiders", Name: "VS Code Insiders", Format: JSON,
		files:   vscodeFamily("Code - Insiders"),
		dialect: serverentry.Common, servers: table("servers", "workspace"),
	},
	{
		ID: "vscodium", Name: "VSCodium", Format: JSON,
		files:   vscodeFamily("VSCodium"),
		dialect: serverentry.Common, servers: table("servers", "workspace"),
	},
	{
		ID: "windsurf", Name: "Windsurf", Format: JSON,
		files: func(w World) []string {
			return one(filepath.Join(w.Home, ".codeium", "windsurf", "mcp_config.json"))
		},
		dialect: serverentry.Common, servers: mcpServers,
	},
	{
		ID: "gemini", Name: "Gemini CLI", Format: JSON,
		files: func(w World) []string {
			// GEMINI_CLI_HOME stands for the home folder: its .gemini
			// holds the settings.
			return one(filepath.Join(w.dotDir("GEMINI_CLI_HOME", ""), ".gemini", "settings.json"))
		},
		project: in(".gemini/settings.json"),
		dialect: serverentry.Gemini, servers: mcpServers,
	},
	{
		ID: "qwen", Name: "Qwen Code", Format: JSON,
		files:   func(w World) []string { return one(filepath.Join(w.dotDir("QWEN_HOME", ".qwen"), "settings.json")) },
		project: in(".qwen/settings.json"),
		dialect: serverentry.Gemini, servers: mcpServers,
	},
	{
		ID: "zed", Name: "Zed", Format: JSON,
		files:   func(w World) []string { return one(filepath.Join(w.xdgDir(), "zed", "settings.json")) },
		dialect: serverentry.Zed, servers: table("context_servers", "project"),
	},
	{
		ID: "codex", Name: "Codex", Format: TOML,
		files: func(w World) []string {
			return one(filepath.Join(w.dotDir("CODEX_HOME", ".codex"), "config.toml"))
		},
		project: in(".codex/config.toml"),
		dialect: serverentry.Codex, servers: table("mcp_servers", "project"),
	},
	{
		ID: "goose", Name: "Goose", Format: YAML,
		files: func(w World) []string {
			if w.GOOS == "windows" {
				return one(filepath.Join(w.configDir(), "Block", "goose", "config", "config.yaml"))
			}
			return one(filepath.Join(w.xdgDir(), "goose", "config.yaml"))
		},
		dialect: serverentry.Goose, servers: table("extensions", "project"),
	},
	{
		ID: "cline", Name: "Cline", Format: JSON,
		files:   extensionFile("saoudrizwan.claude-dev", "cline_mcp_settings.json"),
		dialect: serverentry.Common, servers: mcpServers,
	},
	{
		ID: "roo", Name: "Roo Code", Format: JSON,
		files:   extensionFile("rooveterinaryinc.roo-cline", "mcp_settings.json"),
		project: in(".roo/mcp.json"),
		dialect: serverentry.Common, servers: mcpServers,
	},
	{
		ID: "kilo", Name: "Kilo Code", Format: JSON,
		files:   extensionFile("kilocode.kilo-code", "mcp_settings.json"),
		project: in(".kilocode/mcp.json"),
		dialect: serverentry.Common, servers: mcpServers,
	},
	{
		ID: "continue", Name: "Continue", Format: YAML,
		files: func(w World) []string {
			return one(filepath.Join(w.dotDir("CONTINUE_GLOBAL_DIR", ".continue"), "config.yaml"))
		},
		// Block files: YAML with an mcpServers list, or JSON in Claude
		// Desktop's shape.
		project: in(".continue/mcpServers/*.yaml", ".continue/mcpServers/*.json"),
		dialect: serverentry.Common, servers: table("mcpServers", "project"),
	},
	{
		ID: "opencode", Name: "opencode", Format: JSON,
		files: func(w World) []string {
			// opencode follows the XDG layout on every OS.
			dir := filepath.Join(w.Home, ".config")
			if w.XDGConfigHome != "" && filepath.IsAbs(w.XDGConfigHome) {
				dir = w.XDGConfigHome
			}
			dir = filepath.Join(dir, "opencode")
			out := []string{filepath.Join(dir, "opencode.json"), filepath.Join(dir, "opencode.jsonc"), filepath.Join(dir, "config.json")}
			if d := w.env("OPENCODE_CONFIG_DIR"); d != "" && filepath.IsAbs(d) {
				out = append(out, filepath.Join(d, "opencode.json"), filepath.Join(d, "opencode.jsonc"))
			}
			if f := w.env("OPENCODE_CONFIG"); f != "" && filepath.IsAbs(f) {
				out = append(out, f)
			}
			return out
		},
		project: in("opencode.json", "opencode.jsonc", ".opencode/opencode.json", ".opencode/opencode.jsonc"),
		dialect: serverentry.Opencode, servers: table("mcp", "project"),
	},
	{
		ID: "crush", Name: "Crush", Format: JSON,
		files: func(w World) []string {
			if d := w.env("CRUSH_GLOBAL_CONFIG"); d != "" && filepath.IsAbs(d) {
				return one(filepath.Join(d, "crush.json"))
			}
			if w.GOOS == "windows" {
				return one(filepath.Join(w.localAppData(), "crush", "crush.json"))
			}
			return one(filepath.Join(w.xdgDir(), "crush", "crush.json"))
		},
		project: in(".crush.json", "crush.json"),
		dialect: serverentry.Common, servers: table("mcp", "project"),
	},
	{
		ID: "copilot", Name: "GitHub Copilot CLI", Format: JSON,
		files: func(w World) []string {
			return one(filepath.Join(w.dotDir("COPILOT_HOME", ".copilot"), "mcp-config.json"))
		},
		dialect: serverentry.Copilot, servers: mcpServers,
	},
	{
		ID: "amp", Name: "Amp", Format: JSON,
		files: func(w World) []string {
			// ~/.config/amp on every OS (%USERPROFILE%\.config\amp on
			// Windows).
			dir := filepath.Join(w.Home, ".config")
			if w.GOOS != "windows" && w.XDGConfigHome != "" && filepath.IsAbs(w.XDGConfigHome) {
				dir = w.XDGConfigHome
			}
			return []string{filepath.Join(dir, "amp", "settings.json"), filepath.Join(dir, "amp", "settings.jsonc")}
		},
		project: in(".amp/settings.json", ".amp/settings.jsonc"),
		dialect: serverentry.Common, servers: table("amp.mcpServers", "workspace"),
	},
	{
		ID: "augment", Name: "Augment (Auggie)", Format: JSON,
		files: func(w World) []string {
			return one(filepath.Join(w.dotDir("", ".augment"), "settings.json"))
		},
		dialect: serverentry.Common, servers: mcpServers,
	},
	{
		ID: "factory", Name: "Factory Droid", Format: JSON,
		files:   func(w World) []string { return one(filepath.Join(w.Home, ".factory", "mcp.json")) },
		project: in(".factory/mcp.json"),
		dialect: serverentry.Common, servers: mcpServers,
	},
	{
		ID: "kiro", Name: "Kiro", Format: JSON,
		files:   func(w World) []string { return one(filepath.Join(w.Home, ".kiro", "settings", "mcp.json")) },
		project: in(".kiro/settings/mcp.json"),
		dialect: serverentry.Common, servers: mcpServers,
	},
	{
		ID: "junie", Name: "JetBrains Junie", Format: JSON,
		files:   func(w World) []string { return one(filepath.Join(w.Home, ".junie", "mcp", "mcp.json")) },
		project: in(".junie/mcp/mcp.json"),
		dialect: serverentry.Common, servers: mcpServers,
	},
	{
		ID: "amazonq", Name: "Amazon Q Developer CLI", Format: JSON,
		files:   func(w World) []string { return one(filepath.Join(w.Home, ".aws", "amazonq", "mcp.json")) },
		project: in(".amazonq/mcp.json"),
		dialect: serverentry.Common, servers: mcpServers,
	},
	{
		ID: "lmstudio", Name: "LM Studio", Format: JSON,
		files:   func(w World) []string { return one(filepath.Join(w.Home, ".lmstudio", "mcp.json")) },
		dialect: serverentry.Common, servers: mcpServers,
	},
	{
		ID: "trae", Name: "Trae", Format: JSON,
		files:   func(w World) []string { return one(filepath.Join(w.vscodeUser("Trae"), "mcp.json")) },
		project: in(".trae/mcp.json"),
		dialect: serverentry.Common, servers: mcpServers,
	},
}

// formatOf is the format of the host's file at path.
func (h *Host) formatOf(path string) Format {
	if h.Format == YAML && strings.EqualFold(filepath.Ext(path), ".json") {
		return JSON
	}
	return h.Format
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

// Files returns the host's user config files in w (existing or not; a
// glob stands for the files it matches).
func (h *Host) Files(w World) []string { return h.files(w) }

// ProjectFiles returns the host's per-project config files inside dir
// (globs included), none for hosts that have no project files.
func (h *Host) ProjectFiles(dir string) []string {
	if h.project == nil {
		return nil
	}
	return h.project(dir)
}
