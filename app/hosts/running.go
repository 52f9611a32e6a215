package hosts

// procNames are the program names each host runs as (the base name of its
// argv[0], or of the script a runtime runs: Claude Code and Gemini CLI are
// node scripts). Cline runs inside VS Code.
var procNames = map[string][]string{
	"claude-code":    {"claude"},
	"claude-desktop": {"claude-desktop", "Claude"},
	"cursor":         {"cursor", "Cursor"},
	"vscode":         {"code", "code-insiders"},
	"windsurf":       {"windsurf", "Windsurf"},
	"gemini":         {"gemini"},
	"zed":            {"zed", "zed-editor", "zeditor"},
	"codex":          {"codex"},
	"goose":          {"goose", "goosed"},
	"cline":          {"code", "code-insiders", "cursor", "windsurf"},
}

// Running reports whether host h seems to run now (Linux: a process whose
// program name is one of the host's). A running host reads its config when
// it starts, and some (Claude Code) write their own copy of it back later:
// it is told to restart, never stopped.
func (h *Host) Running() bool { return running(procNames[h.ID]) }
