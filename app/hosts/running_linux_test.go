package hosts

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"rootkeeper/app/apptest"
)

// A process called goosed makes Goose running; its end makes it not.
func TestRunningSeesAHost(t *testing.T) {
	// Goose: a host no other test runs (the root package's tests run
	// codex, gemini and claude while this one may run).
	h, _ := Lookup("goose")
	if h.Running() {
		apptest.Missing(t, "a goose is running on this machine")
	}
	sleep := apptest.NeedProgram(t, "sleep")
	fake := filepath.Join(t.TempDir(), "goosed")
	if err := os.Symlink(sleep, fake); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(fake, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !h.Running() {
		t.Error("goose runs, not seen")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if h.Running() {
		t.Error("goose ended, still seen")
	}
}
