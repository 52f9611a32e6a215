//go:build unix

package atomicfile

import (
	"io/fs"
	"syscall"

	"rootkeeper/app/filecall"
)

// SyncDir makes a rename in dir durable: the new directory entry reaches
// the disk, not only the file's bytes. The folder is a bare descriptor, not
// an *os.File, which would cost five more system calls (os tries to make
// it non-blocking and add it to the network poller, and undoes both); its
// calls are package filecall's.
func SyncDir(dir string) error { return syncDir(filecall.In(dir), dir) }

// syncDir is SyncDir through the calls c.
func syncDir(c filecall.Calls, dir string) error {
	fd, err := c.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer c.Close(fd)
	if err := filecall.Sync(fd, false); err != nil {
		return &fs.PathError{Op: "sync", Path: dir, Err: err}
	}
	return nil
}
