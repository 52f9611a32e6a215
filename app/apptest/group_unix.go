//go:build unix

package apptest

import (
	"os/exec"
	"syscall"
)

// OwnGroup starts cmd in a process group of its own, so that KillGroup
// also ends what it started (Xvfb, a bus, the app).
func OwnGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// KillGroup ends cmd's process group, started with OwnGroup.
func KillGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
