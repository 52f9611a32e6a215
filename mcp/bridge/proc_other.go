//go:build !unix

package bridge

import "os"

// killGroup ends the server where there are no process groups.
func killGroup(pid int, hard bool) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}
