//go:build !unix

package mcp

import "os"

// Group stands for a server's process where there are no process groups:
// only the server itself is signalled; its children may outlive it.
type Group int

func (g Group) signal(kill bool) {
	if g <= 0 {
		return
	}
	if p, err := os.FindProcess(int(g)); err == nil {
		if kill {
			p.Kill()
		} else {
			p.Signal(os.Interrupt)
		}
	}
}

// Terminate asks the server to end.
func (g Group) Terminate() { g.signal(false) }

// Kill ends the server.
func (g Group) Kill() { g.signal(true) }

// Alive is false: there is no group to outlive the server.
func (g Group) Alive() bool { return false }
