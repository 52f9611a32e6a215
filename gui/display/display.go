// Package display tells, before the window is made, whether an X display
// can be reached: with none, the window's toolkit (GLFW) prints its own
// complaint and then panics, which a person running Rootkeeper over SSH
// or from a session without X would see as a stack trace.
package display

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Wait is how long Check waits for an X server that is not listening yet
// (one that starts with the session, as Rootkeeper may at login).
const Wait = 2 * time.Second

// headless is the way out each error names.
const headless = `to run without a window: rootkeeper headless`

// Check reports whether the X display named display (the DISPLAY
// variable) can be reached, waiting up to Wait for a local one to listen.
// A display on another host, or named by a socket path, is not checked:
// the toolkit reaches it its own way. Where windows need no X server
// (Windows, macOS), Check is nil.
func Check(display string) error {
	return check(display, Wait)
}

func check(display string, wait time.Duration) error {
	if !needsX {
		return nil
	}
	if display == "" {
		return fmt.Errorf("cannot open a window: no display (DISPLAY is not set; %s)", headless)
	}
	n, local, err := parse(display)
	if err != nil {
		return fmt.Errorf("cannot open a window on display %q: %v (%s)", display, err, headless)
	}
	if !local {
		return nil
	}
	deadline := time.Now().Add(wait)
	for {
		err := dial(n)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cannot open a window on display %q: no X server listens at %s (%s)", display, socketPath(n), headless)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// parse reads display as [HOST]:NUMBER[.SCREEN]: the display number, and
// whether the display is this machine's through a unix socket (no host,
// or "unix").
func parse(display string) (n int, local bool, err error) {
	i := strings.LastIndexByte(display, ':')
	if i < 0 {
		return 0, false, errors.New("not a display name like :0")
	}
	host, rest := display[:i], display[i+1:]
	if j := strings.IndexByte(rest, '.'); j >= 0 {
		rest = rest[:j]
	}
	n, err = strconv.Atoi(rest)
	if err != nil || n < 0 {
		return 0, false, errors.New("not a display name like :0")
	}
	return n, host == "" || host == "unix", nil
}

// socketPath is where the X server of display n listens on this machine.
func socketPath(n int) string { return "/tmp/.X11-unix/X" + strconv.Itoa(n) }
