package apptest

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// XServer starts a private X server (Xvfb) with one screen of size
// ("1280x800") for the test, and returns its display (":N"); it stops
// when the test ends. Xvfb picks a free display itself and says which
// (-displayfd), so tests running at once never share one: xvfb-run -a
// guesses a free number from the lock files in /tmp, and two runs may
// guess the same one at once. It is stopped with SIGTERM, which lets it
// remove its lock file.
// Local clients need no cookie: point them at it with WithDisplay.
func XServer(t testing.TB, size string) string {
	t.Helper()
	NeedProgram(t, "Xvfb")
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", size+"x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{wr}
	var said strings.Builder // what Xvfb says, shown when the test fails
	cmd.Stderr = &said
	if err := cmd.Start(); err != nil {
		t.Fatalf("Xvfb: %v", err)
	}
	wr.Close()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if t.Failed() {
			t.Logf("Xvfb (%s):\n%s", cmd.ProcessState, said.String())
		}
	})
	line, err := bufio.NewReader(rd).ReadString('\n')
	rd.Close()
	if err != nil {
		t.Fatalf("Xvfb gave no display: %v", err)
	}
	return ":" + strings.TrimSpace(line)
}

// WithDisplay is env (os.Environ() when nil) with DISPLAY set to display
// and no XAUTHORITY, for a program run on an XServer.
func WithDisplay(env []string, display string) []string {
	if env == nil {
		env = os.Environ()
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "DISPLAY=") || strings.HasPrefix(kv, "XAUTHORITY=")
	})
	return append(env, "DISPLAY="+display)
}
