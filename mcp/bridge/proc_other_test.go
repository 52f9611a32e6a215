//go:build !unix

package bridge

import "os"

// processAlive reports whether process pid exists.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p != nil
}
