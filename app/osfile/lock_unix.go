//go:build unix

package osfile

import (
	"fmt"
	"os"
	"syscall"
)

// WithLock runs fn holding an flock on the lock file at path (created if
// missing): exclusive, or shared for readers that never write. The lock is
// released when the process dies, so a crashed writer never wedges the
// others.
func WithLock(path string, exclusive bool, fn func() error) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening lock file: %w", err)
	}
	defer f.Close()
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return fn()
}
