//go:build unix

package hosts

import (
	"os"
	"path/filepath"
	"syscall"
)

// withLock runs fn holding an exclusive flock on STATE_DIR/hosts/lock, so
// two protects or restores never interleave their edits of the record.
func withLock(stateDir string, fn func() error) error {
	if err := os.MkdirAll(hostsDir(stateDir), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(hostsDir(stateDir), "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return fn()
}
