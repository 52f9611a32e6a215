//go:build unix

package main

import (
	"syscall"
)

// The process handling the end-to-end tests need, kept out of the test
// files so they also compile (and are vetted) for Windows: .ci/platforms.

// mkfifo makes a named pipe at path.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

// pidExists reports whether a process with this pid exists (a zombie
// counts: signal 0 reaches it).
func pidExists(pid int) bool { return syscall.Kill(pid, 0) == nil }

// killPID ends the process pid at once, errors ignored: it is cleanup.
func killPID(pid int) { syscall.Kill(pid, syscall.SIGKILL) }
