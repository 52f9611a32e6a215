// Package reap ends what the servers leave behind. A stdio server runs in
// its own process group, which Rootkeeper ends when it stops the server; a
// descendant that leaves the group (setsid, a daemonising launcher) would
// escape that and outlive Rootkeeper. As a child subreaper, Rootkeeper
// inherits such orphans instead of init, and EndOrphans ends them when it
// shuts down.
package reap

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes orphaned descendants of this process its children
// (PR_SET_CHILD_SUBREAPER) rather than init's.
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// Children lists the pids whose parent is this process.
func Children() []int {
	self := os.Getpid()
	matches, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses,
		// so read from the last ')'.
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil && ppid == self {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(m))); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// EndOrphans ends every child still left once the app has stopped its
// servers: SIGTERM to each (and its process group), SIGKILL to what is left
// after grace, and each is reaped. Call it only when no child of the app is
// meant to be running. It returns how many it found.
func EndOrphans(grace time.Duration) int {
	kids := Children()
	for _, pid := range kids {
		syscall.Kill(pid, syscall.SIGTERM)
		syscall.Kill(-pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	left := kids
	for len(left) > 0 && time.Now().Before(deadline) {
		left = reapExited(left)
		if len(left) > 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, pid := range left {
		syscall.Kill(pid, syscall.SIGKILL)
		syscall.Kill(-pid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil)
	}
	return len(kids)
}

// reapExited reaps those of pids that have exited and returns the rest.
func reapExited(pids []int) []int {
	var left []int
	for _, pid := range pids {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if got == pid || err == syscall.ECHILD {
			continue
		}
		left = append(left, pid)
	}
	return left
}
