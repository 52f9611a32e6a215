//go:build unix

package gui

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"rootkeeper/app/hosts"
)

// A named pipe where ~/.claude.json should be is shown as not read, by
// what it is; Cursor's file beside it is listed as usual.
func TestHostsTabNamesARefusedFile(t *testing.T) {
	f := newFixture(t, Options{}, nil)
	home := t.TempDir()
	f.u.hostsOptions = func() hosts.Options {
		return hosts.Options{World: hosts.World{GOOS: "linux", Home: home, XDGConfigHome: filepath.Join(home, ".config")},
			Store: f.core.Store(), Executable: "/usr/bin/rootkeeper"}
	}
	if err := syscall.Mkfifo(filepath.Join(home, ".claude.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	cursor := filepath.Join(home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(cursor), 0o755)
	os.WriteFile(cursor, []byte(`{"mcpServers": {"time": {"command": "uvx"}}}`), 0o600)
	f.u.selectTab("Hosts")
	f.u.hosts.reload()
	got := labels(f.u.hosts.list)
	for _, want := range []string{"~/.claude.json — not read: " + filepath.Join(home, ".claude.json") + " is a named pipe (FIFO)", "time · user · can see folders without asking you"} {
		if !strings.Contains(got, want) {
			t.Errorf("tab does not show %q:\n%s", want, got)
		}
	}
}
