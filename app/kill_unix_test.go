//go:build unix

package app

import (
	"os"
	"os/exec"
	"syscall"
)

// killSelf ends this process at once, as a crash or kill -9 would.
func killSelf() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }

// killedHard reports whether a child ended by killSelf (SIGKILL).
func killedHard(exit *exec.ExitError) bool {
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}
