//go:build !windows

package control

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// listen (re)creates the socket in dir, mode 0600.
func listen(dir string) (net.Listener, error) {
	path := filepath.Join(dir, SocketName)
	os.Remove(path)
	// The state folder is 0700, so the moment between creating the socket
	// and narrowing it to 0600 exposes nothing. (Changing the umask instead
	// would race every other file this process creates.)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	return ln, nil
}

// unlisten removes the socket once nobody listens on it.
func unlisten(dir string) { os.Remove(filepath.Join(dir, SocketName)) }

// dial connects to the socket in dir.
func dial(ctx context.Context, dir string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "unix", filepath.Join(dir, SocketName))
}
