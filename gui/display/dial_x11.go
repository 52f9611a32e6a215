//go:build linux || freebsd || openbsd || netbsd || dragonfly

package display

import (
	"net"
	"runtime"
	"time"
)

// needsX: the window's toolkit draws through an X server here.
const needsX = true

// dial connects to the X server of display n as libxcb does: its
// abstract socket first (Linux), then its socket file.
func dial(n int) error {
	var err error
	paths := []string{socketPath(n)}
	if runtime.GOOS == "linux" {
		paths = []string{"@" + socketPath(n), socketPath(n)}
	}
	for _, p := range paths {
		var c net.Conn
		if c, err = net.DialTimeout("unix", p, time.Second); err == nil {
			c.Close()
			return nil
		}
	}
	return err
}
