//go:build !unix

package hosts

import "os"

// withLock runs fn; without flock, protects and restores are not serialised
// across processes on this OS.
func withLock(stateDir string, fn func() error) error {
	if err := os.MkdirAll(hostsDir(stateDir), 0o700); err != nil {
		return err
	}
	return fn()
}
