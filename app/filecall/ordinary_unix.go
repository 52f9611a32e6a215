//go:build unix

package filecall

import "syscall"

// ordinary runs call, again when a signal interrupted it.
func ordinary(call func() error) error {
	for {
		if err := call(); err != syscall.EINTR {
			return err
		}
	}
}

// ordinaryN runs call, again when a signal interrupted it.
func ordinaryN(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// ordinaryOpen is open(2) made the ordinary way.
func ordinaryOpen(path string, flag int, perm uint32) (int, error) {
	for {
		fd, err := syscall.Open(path, flag, perm)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}
