//go:build unix

package mcp

import (
	"errors"
	"os/exec"
	"syscall"
)

// setProcessGroup starts the server in its own process group, so that it
// and everything it starts there can be signalled at once, and (on Linux)
// asks the kernel to end it if Rootkeeper dies without stopping it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}

// signalGroup sends sig to every process in the server's group. The group id
// is the leader's pid (Setpgid with Pgid 0).
func (p *process) signalGroup(sig syscall.Signal) {
	if pid := p.PID(); pid > 0 {
		syscall.Kill(-pid, sig)
	}
}

// groupAlive reports whether any process of the server's group is left.
// Meaningful once the leader has been reaped (a zombie still counts).
func (p *process) groupAlive() bool {
	pid := p.PID()
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(-pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func (p *process) terminate() { p.signalGroup(syscall.SIGTERM) }
func (p *process) kill()      { p.signalGroup(syscall.SIGKILL) }
