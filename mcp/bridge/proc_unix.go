//go:build unix

package bridge

import "syscall"

// killGroup sends SIGTERM (or SIGKILL, when hard) to the server's process
// group, whose id is its pid.
func killGroup(pid int, hard bool) {
	sig := syscall.SIGTERM
	if hard {
		sig = syscall.SIGKILL
	}
	syscall.Kill(-pid, sig)
}
