package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"rootkeeper/app/cli"
)

// TestNoDisplaySaysSo: the app with no tray and no display to show its
// window on (a session over SSH, a display that is not there), and the
// window verb likewise, end at once with one line that names the display
// and the way out, exit 1: no toolkit stack trace, no app left running
// with nothing to show.
func TestNoDisplaySaysSo(t *testing.T) {
	var env []string
	for _, kv := range serverEnv() {
		if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") && !strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
			env = append(env, kv)
		}
	}
	// A display number nothing listens at.
	n := 7000 + os.Getpid()%900
	for ; n < 8000; n++ {
		if _, err := os.Lstat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); os.IsNotExist(err) {
			break
		}
	}
	gone := fmt.Sprintf(":%d", n)
	for _, tc := range []struct {
		name, display string
		args          []string
		want          string
	}{
		{"app, no DISPLAY", "", nil, "DISPLAY is not set"},
		{"app, nothing at the display", gone, nil, fmt.Sprintf("display %q: no X server listens", gone)},
		{"the window process", gone, []string{cli.WindowVerb}, fmt.Sprintf("display %q: no X server listens", gone)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := env
			if tc.display != "" {
				e = append(e, "DISPLAY="+tc.display)
			}
			state := t.TempDir()
			_, stderr, code := runIn(t, e, state, tc.args...)
			if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "rootkeeper headless") {
				t.Errorf("exit %d, stderr %q; want exit 1 and one line with %q and the way out", code, stderr, tc.want)
			}
		})
	}
}
