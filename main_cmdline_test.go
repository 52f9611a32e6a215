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

// A folder on a server's command line is a slot: the configuration keeps
// it, and the server is held, never started, until the person allows it;
// then server-filesystem runs with it on its command line (and gets it in
// roots/list), and an args-mode server gets it once, where it was written.
func TestCommandLineFoldersHoldTheServer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc")
	}
	state, home := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	desk := filepath.Join(home, "Desktop")
	os.Mkdir(desk, 0o755)
	fs := apptest.NPMServer(t, "mcp-server-filesystem")
	out := mustRun(t, state, "servers", "add", "fs", "--", fs, "~/Desktop")
	if !strings.Contains(out, "fs is configured with the folder "+desk+" (argument 1): it starts once you allow it") {
		t.Errorf("servers add did not say what it found:\n%s", out)
	}
	dump := filepath.Join(t.TempDir(), "env")
	mustRun(t, state, "servers", "add", "argsrv", "--no-confine", "--roots-mode", "args", "--env", "DUMP="+dump, "--",
		writeScript(t, `printf '%s\n' "$@" > "$DUMP.args"
env > "$DUMP.tmp" && mv "$DUMP.tmp" "$DUMP"
INFO='{"name":"argsrv","version":"1"}'
`+mcpShell), desk)
	if out := mustRun(t, state, "servers", "list"); !strings.Contains(out, fs+" ~/Desktop") {
		t.Errorf("the stored command line lost its folder:\n%s", out)
	}

	st := liveStatus(t, state)
	for _, s := range st.Servers {
		if len(s.Requests) != 1 || s.Requests[0].Path != desk || s.Requests[0].From != app.FromCommandLine || len(s.Visible) != 0 {
			t.Fatalf("%s: requests %+v, visible %+v", s.Name, s.Requests, s.Visible)
		}
		if !strings.Contains(s.Held, "waiting for your decision on "+desk) {
			t.Fatalf("%s is not held: %q", s.Name, s.Held)
		}
	}

	startHeadless(t, state)
	waitFor(t, "both servers to be held", func() bool {
		held := 0
		for _, s := range liveStatus(t, state).Servers {
			if s.Live != nil && s.Live.State == app.ServerHeld && s.Live.PID == 0 {
				held++
			}
		}
		return held == 2
	})
	if _, err := os.Stat(dump); err == nil {
		t.Fatal("the args-mode server was started before the grant")
	}

	mustRun(t, state, "grant", "fs", desk)
	mustRun(t, state, "grant", "argsrv", desk)
	var fsPID int
	waitFor(t, "fs to run with the granted folder", func() bool {
		sent, live := lastSent(liveStatus(t, state), "fs")
		if live != nil && live.State == app.ServerConnected {
			fsPID = live.PID
		}
		return fsPID > 0 && slices.Equal(sent, []string{app.URIFromPath(desk)})
	})
	if args := cmdline(t, fsPID); !slices.Equal(args[len(args)-1:], []string{"~/Desktop"}) {
		t.Errorf("fs runs as %q, not as configured", args)
	}
	waitFor(t, "the args-mode server to be started with the granted folder", func() bool {
		data, _ := os.ReadFile(dump + ".args")
		return slices.Contains(strings.Split(strings.TrimSpace(string(data)), "\n"), desk)
	})
	if data, _ := os.ReadFile(dump + ".args"); strings.Count(string(data), desk) != 1 {
		t.Errorf("the args-mode server got the folder more than once: %q", data)
	}

	mustRun(t, state, "revoke", "fs", desk)
	waitFor(t, "fs to be held again", func() bool {
		_, live := lastSent(liveStatus(t, state), "fs")
		return live != nil && live.State == app.ServerHeld
	})
	if alive(fsPID) {
		t.Error("fs still runs after its folder was revoked")
	}
}
