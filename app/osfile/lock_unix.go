//go:build unix

package osfile

import (
	"fmt"
	"io/fs"
	"syscall"

	"rootkeeper/app/filecall"
)

// WithLock runs fn holding an flock on the lock file at path (created if
// missing): exclusive, or shared for readers that never write. The lock is
// released when the process dies, so a crashed writer never wedges the
// others.
//
// The lock file is a bare descriptor, not an *os.File: os sets a file it
// opens non-blocking and tries to add it to the network poller (which
// refuses a regular file), then sets it blocking again, and Fd sets it
// blocking once more: seven system calls a lock that did nothing (every
// save of the state took the lock). Its calls are package filecall's:
// raw on a local disk, and a lock held by another process is waited for
// through the scheduler.
func WithLock(path string, exclusive bool, fn func() error) error {
	c := filecall.For(path)
	fd, err := c.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("opening lock file: %w", &fs.PathError{Op: "open", Path: path, Err: err})
	}
	defer c.Close(fd)
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if err := c.Flock(fd, how); err != nil {
		return fmt.Errorf("locking %s: %w", path, err)
	}
	defer c.Flock(fd, syscall.LOCK_UN)
	return fn()
}
