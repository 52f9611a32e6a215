//go:build !unix

package mcp

import "os/exec"

// Without process groups only the server itself is signalled; its children
// may outlive it.
func setProcessGroup(cmd *exec.Cmd) {}

// group is the server's process (none until it has started).
func (p *process) group() Group { return Group(p.PID()) }
