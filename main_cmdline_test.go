package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// cmdline is the command line of process pid.
func cmdline(t *testing.T, pid int) []string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
}

// A folder on a server's command line is a request, not a grant: the
// server is never started with it before the person allows it; then
// server-filesystem gets it through roots, and an args-mode server on its
// command line.
func TestCommandLineFoldersAreRequests(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc")
	}
	state, home := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	desk := filepath.Join(home, "Desktop")
	os.Mkdir(desk, 0o755)
	fs := apptest.NPMServer(t, "mcp-server-filesystem")
	out := mustRun(t, state, "servers", "add", "fs", "--", fs, "~/Desktop")
	if !strings.Contains(out, "fs was given "+desk+" on its command line") {
		t.Errorf("servers add did not say what it moved:\n%s", out)
	}
	dump := filepath.Join(t.TempDir(), "env")
	mustRun(t, state, "servers", "add", "argsrv", "--roots-mode", "args", "--env", "DUMP="+dump, "--",
		writeScript(t, `printf '%s\n' "$@" > "$DUMP.args"
env > "$DUMP.tmp" && mv "$DUMP.tmp" "$DUMP"
INFO='{"name":"argsrv","version":"1"}'
`+mcpShell), desk)

	st := liveStatus(t, state)
	for _, s := range st.Servers {
		if len(s.Requests) != 1 || s.Requests[0].Path != desk || s.Requests[0].From != app.FromCommandLine || len(s.Visible) != 0 {
			t.Fatalf("%s: requests %+v, visible %+v", s.Name, s.Requests, s.Visible)
		}
	}

	startHeadless(t, state)
	var fsPID int
	waitFor(t, "both servers to start", func() bool {
		_, live := lastSent(liveStatus(t, state), "fs")
		_, err := os.Stat(dump)
		if live != nil && live.State == app.ServerConnected {
			fsPID = live.PID
		}
		return fsPID > 0 && err == nil
	})
	if args := cmdline(t, fsPID); slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "Desktop") }) {
		t.Fatalf("fs was started with the folder on its command line: %q", args)
	}
	if data, _ := os.ReadFile(dump + ".args"); strings.Contains(string(data), "Desktop") {
		t.Fatalf("the args-mode server got the folder before the grant: %q", data)
	}
	if sent, _ := lastSent(liveStatus(t, state), "fs"); len(sent) != 0 {
		t.Fatalf("fs was sent %q before any grant", sent)
	}

	mustRun(t, state, "grant", "fs", desk)
	mustRun(t, state, "grant", "argsrv", desk)
	waitFor(t, "fs to be sent the granted folder", func() bool {
		sent, _ := lastSent(liveStatus(t, state), "fs")
		return slices.Equal(sent, []string{app.URIFromPath(desk)})
	})
	waitFor(t, "the args-mode server to be started with the granted folder", func() bool {
		data, _ := os.ReadFile(dump + ".args")
		return slices.Contains(strings.Split(strings.TrimSpace(string(data)), "\n"), desk)
	})
}
