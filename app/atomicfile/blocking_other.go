//go:build unix && !linux

package atomicfile

import "syscall"

// syncFD makes fd's data durable (fsync: fdatasync is not everywhere),
// again when a signal interrupted it.
func syncFD(fd int, _ bool) error {
	for {
		if err := syscall.Fsync(fd); err != syscall.EINTR {
			return err
		}
	}
}
