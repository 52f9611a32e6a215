package display

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"rootkeeper/app/apptest"
)

// freeDisplay is a display number nothing listens at: no lock file and no
// socket of an X server.
func freeDisplay(t *testing.T) int {
	t.Helper()
	for n := 6000 + os.Getpid()%1000; n < 8000; n++ {
		_, lockErr := os.Lstat(fmt.Sprintf("/tmp/.X%d-lock", n))
		if os.IsNotExist(lockErr) && dial(n) != nil {
			return n
		}
	}
	t.Fatal("no free display number")
	return 0
}

// TestCheckNamesWhatIsWrong: no display, a name that is not one, and a
// display nothing listens at each give one line that names what is wrong
// and the way out; a display on another host is left to the toolkit.
func TestCheckNamesWhatIsWrong(t *testing.T) {
	free := fmt.Sprintf(":%d", freeDisplay(t))
	for _, tc := range []struct{ display, want string }{
		{"", "DISPLAY is not set"},
		{"foo", `display "foo": not a display name`},
		{":x.0", `display ":x.0": not a display name`},
		{free, fmt.Sprintf("display %q: no X server listens at /tmp/.X11-unix/X%s", free, free[1:])},
	} {
		err := check(tc.display, 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "rootkeeper headless") || strings.Contains(err.Error(), "\n") {
			t.Errorf("check(%q) = %v, want one line with %q and the way out", tc.display, err, tc.want)
		}
	}
	if err := check("build-host.example:0", 0); err != nil {
		t.Errorf("a display on another host: %v, want it left to the toolkit", err)
	}
}

// TestCheckReachesARealXServer: an Xvfb's display passes, by its number
// and with a screen.
func TestCheckReachesARealXServer(t *testing.T) {
	d := apptest.XServer(t, "640x480")
	for _, name := range []string{d, d + ".0", "unix" + d} {
		if err := check(name, 0); err != nil {
			t.Errorf("check(%q): %v", name, err)
		}
	}
}

// TestCheckWaitsForAnXServerThatStarts: an X server that starts after
// the check began (a session still coming up) is waited for.
func TestCheckWaitsForAnXServerThatStarts(t *testing.T) {
	apptest.NeedProgram(t, "Xvfb")
	n := freeDisplay(t)
	result := make(chan error, 1)
	go func() { result <- check(fmt.Sprintf(":%d", n), time.Minute) }()
	x := exec.Command("Xvfb", fmt.Sprintf(":%d", n), "-screen", "0", "640x480x24", "-nolisten", "tcp")
	if err := x.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Process.Signal(syscall.SIGTERM); x.Wait() })
	if err := <-result; err != nil {
		t.Errorf("the check did not wait for the X server: %v", err)
	}
}
