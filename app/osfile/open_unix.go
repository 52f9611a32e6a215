//go:build unix

package osfile

import (
	"os"
	"syscall"
)

// OpenNoWait opens path for reading without ever waiting in open(2): a FIFO
// or a device where a file or folder was expected would otherwise block the
// caller forever (O_NONBLOCK), and a terminal must not become the
// controlling one (O_NOCTTY). Reads from the file are ordinary blocking
// reads of regular files and folders; callers check the type with Stat.
func OpenNoWait(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}
