//go:build unix

package mcp

import (
	"errors"
	"syscall"
)

// Group is the process group of a server started by Rootkeeper: its id is
// the server's pid (each server leads a group of its own). Zero is no group.
type Group int

func (g Group) signal(sig syscall.Signal) {
	if g > 0 {
		syscall.Kill(-int(g), sig)
	}
}

// Terminate sends SIGTERM to every process of the group.
func (g Group) Terminate() { g.signal(syscall.SIGTERM) }

// Kill sends SIGKILL to every process of the group.
func (g Group) Kill() { g.signal(syscall.SIGKILL) }

// Alive reports whether any process of the group is left. Meaningful once
// the leader has been reaped (a zombie still counts).
func (g Group) Alive() bool {
	if g <= 0 {
		return false
	}
	err := syscall.Kill(-int(g), 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// release has nothing to let go of: a process group ends with its last
// process.
func (g Group) release() {}
