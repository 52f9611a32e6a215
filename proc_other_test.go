//go:build !unix

package main

import (
	"errors"
	"os"
)

// The Windows side of proc_unix_test.go. The tests that need FIFOs and
// process groups skip themselves off Linux; these keep them compiling.

// mkfifo fails: Windows has no named pipes in the file system.
func mkfifo(path string) error { return errors.New("no FIFOs on this system: " + path) }

// pidExists reports whether a process with this pid can be opened.
func pidExists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

// killPID ends the process pid at once, errors ignored: it is cleanup.
func killPID(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}
