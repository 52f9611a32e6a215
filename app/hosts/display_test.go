package hosts

import "testing"

func TestDisplayName(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"claude-code.filesystem", "filesystem (Claude Code)"},
		{"cursor.everything", "everything (Cursor)"},
		{"claude-code." + baseTag("/home/ada/src/api") + ".postgres", "postgres (Claude Code, api)"},
		{"vscode." + baseTag("/home/ada/web") + ".git", "git (VS Code, web)"},
		{"claude-desktop.my.server", "my.server (Claude Desktop)"}, // dots in the host's name
		{"cursor", "Cursor"},
		{"claude-code 2.1.330", "Claude Code 2.1.330"},
		{"someone 1.0", "someone 1.0"},
		{"filesystem", "filesystem"},
		{"nohost.filesystem", "nohost.filesystem"},
		{"claude-code.", "claude-code."},
	} {
		if got := DisplayName(c.name); got != c.want {
			t.Errorf("DisplayName(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	// The name protect gives is read back.
	if got := DisplayName(rootkeeperName("gemini", "", "fetch")); got != "fetch (Gemini CLI)" {
		t.Errorf("DisplayName of protect's name = %q", got)
	}
}
