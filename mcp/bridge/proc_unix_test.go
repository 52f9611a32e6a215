//go:build unix

package bridge

import "syscall"

// processAlive reports whether process pid exists.
func processAlive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}
