//go:build unix

package atomicfile

import (
	"io/fs"
	"syscall"
)

// SyncDir makes a rename in dir durable: the new directory entry reaches
// the disk, not only the file's bytes. The folder is a bare descriptor, not
// an *os.File, which would cost five more system calls (os tries to make
// it non-blocking and add it to the network poller, and undoes both).
func SyncDir(dir string) error {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer syscall.Close(fd)
	if err := fsync(fd); err != nil {
		return &fs.PathError{Op: "sync", Path: dir, Err: err}
	}
	return nil
}

// fsync is fsync(2), again when a signal interrupted it.
func fsync(fd int) error {
	for {
		if err := syscall.Fsync(fd); err != syscall.EINTR {
			return err
		}
	}
}
