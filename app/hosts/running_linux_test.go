package hosts

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"rootkeeper/app/apptest"
)

// A process called codex makes Codex running; its end makes it not.
func TestRunningSeesAHost(t *testing.T) {
	h, _ := Lookup("codex")
	if h.Running() {
		apptest.Missing(t, "a codex is running on this machine")
	}
	sleep := apptest.NeedProgram(t, "sleep")
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
