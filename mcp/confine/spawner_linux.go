package confine

import (
	"os/exec"
	"runtime"
	"sync"
)

// The kernel sends a child its death signal (Pdeathsig: Rootkeeper asks
// for SIGTERM, so that no server outlives it) when the thread that forked
// it ends, not when the process does; and Go ends a thread whenever a
// goroutine locked to it returns: the confined launch's (launch_linux.go),
// an observer's, any library's. A server forked from whatever thread the
// asking goroutine ran on was sent SIGTERM when that thread later ended,
// which another server's stop could cause. So servers that are not
// started from a confined thread of their own are forked from one thread
// that never ends.

// spawn is a request to the spawning thread: start cmd, answer on done.
type spawn struct {
	cmd  *exec.Cmd
	done chan error
}

// spawner is the spawning thread's queue, started on first use.
var spawner = sync.OnceValue(func() chan<- spawn {
	q := make(chan spawn)
	go func() {
		// Never unlocked, never returns: the thread lives as long as
		// Rootkeeper, and runs nothing else.
		runtime.LockOSThread()
		for s := range q {
			s.done <- s.cmd.Start()
		}
	}()
	return q
})

// startOnSpawner starts cmd from the spawning thread.
func startOnSpawner(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	spawner() <- spawn{cmd, done}
	return <-done
}
