package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/mcp/confine"
)

// The real binary starts a server added with --confine through its own
// __confine re-exec: the server process is the server (not rootkeeper),
// runs under no_new_privs, and status says which servers are confined and
// under which Landlock ABI, and which only get advice.
func TestConfinedServerThroughTheBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Landlock is Linux's")
	}
	abi, err := confine.ABI()
	if err != nil {
		t.Fatalf("Landlock: %v", err)
	}
	nosy := apptest.Program(t, "mcp/confine/testdata/nosy")
	state := t.TempDir()
	folder := filepath.Join(t.TempDir(), "project")
	os.Mkdir(folder, 0o755)
	out := mustRun(t, state, "servers", "add", "boxed", "--confine", "--", nosy)
	if !strings.Contains(out, "boxed runs confined (Landlock ABI "+strconv.Itoa(abi)+")") {
		t.Errorf("servers add said %q", out)
	}
	mustRun(t, state, "servers", "add", "open", "--no-confine", "--", nosy)
	mustRun(t, state, "roots", "add", folder, "--enable")
	mustRun(t, state, "grant", "boxed", folder)
	startHeadless(t, state)
	var live *app.ServerStatus
	waitFor(t, "boxed to connect", func() bool {
		_, live = lastSent(liveStatus(t, state), "boxed")
		return live != nil && live.State == app.ServerConnected && live.PID != 0
	})
	if live.LandlockABI != abi {
		t.Errorf("live LandlockABI = %d, want %d", live.LandlockABI, abi)
	}
	proc := "/proc/" + strconv.Itoa(live.PID)
	if exe, err := os.Readlink(proc + "/exe"); err != nil || exe != nosy {
		t.Errorf("the server process runs %q (%v), want %q: the re-exec did not exec the server", exe, err, nosy)
	}
	if s, err := os.ReadFile(proc + "/status"); err != nil || !strings.Contains(string(s), "NoNewPrivs:\t1") {
		t.Errorf("the confined server is not under no_new_privs (%v)", err)
	}
	text := mustRun(t, state, "status")
	if !strings.Contains(text, "boxed (stdio, roots: protocol)") ||
		!strings.Contains(text, "  "+app.ConfinedText(abi)+"\n") ||
		!strings.Contains(text, "  not confined: roots are advice to this server\n") {
		t.Errorf("status:\n%s", text)
	}
}
