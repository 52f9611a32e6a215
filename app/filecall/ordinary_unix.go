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
