package hosts

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A process called codex makes Codex running; its end makes it not.
func TestRunningSeesAHost(t *testing.T) {
	h, _ := Lookup("codex")
	if h.Running() {
		t.Skip("a codex is running on this machine")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	fake := filepath.Join(t.TempDir(), "codex")
	if err := os.Symlink(sleep, fake); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(fake, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !h.Running() {
		t.Error("codex runs, not seen")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if h.Running() {
		t.Error("codex ended, still seen")
	}
}
