//go:build unix

package mcp

import (
	"os/exec"
	"syscall"

	"rootkeeper/mcp/confine"
)

// setProcessGroup starts the server in its own process group, so that it
// and everything it starts there can be signalled at once, and (on Linux)
// asks the kernel to end it if Rootkeeper dies without stopping it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
}

// group is the server's process group (none until it has started).
func (p *process) group() Group { return Group(p.PID()) }

// StartServer starts a server's command (from StdioCommand); its process
// group is its own already (setProcessGroup). A confined, observed server
// that needs no network of its own starts from a confined thread of
// Rootkeeper's (confine.Start), without re-executing Rootkeeper.
func StartServer(cmd *exec.Cmd) error { return confine.Start(cmd) }
