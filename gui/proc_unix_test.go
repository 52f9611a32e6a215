//go:build unix

package gui

import (
	"os/exec"
	"syscall"
)

// Process groups for the end-to-end tests, kept out of the test files so
// they also compile (and are vetted) for Windows: .ci/platforms.

// ownGroup starts cmd in a process group of its own, so that killGroup
// also ends what it started (Xvfb, the bus, the app).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup ends cmd's process group, started with ownGroup.
func killGroup(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
