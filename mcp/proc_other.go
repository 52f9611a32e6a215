//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

// Without process groups only the server itself is signalled; its children
// may outlive it.
func setProcessGroup(cmd *exec.Cmd) {}

func (p *process) signal(kill bool) {
	pid := p.PID()
	if pid <= 0 {
		return
	}
	if pr, err := os.FindProcess(pid); err == nil {
		if kill {
			pr.Kill()
		} else {
			pr.Signal(os.Interrupt)
		}
	}
}

func (p *process) groupAlive() bool { return false }
func (p *process) terminate()       { p.signal(false) }
func (p *process) kill()            { p.signal(true) }
