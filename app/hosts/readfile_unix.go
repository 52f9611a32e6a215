//go:build unix

package hosts

import (
	"os"
	"syscall"
)

// openNonBlocking opens path for reading without waiting: a named pipe
// with no writer opens at once instead of blocking until one comes, and
// no terminal becomes the process's.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}
