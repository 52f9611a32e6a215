package mcp

import "time"

// StopProcess ends a stdio server the one way Rootkeeper does, for the
// managed clients and the bridge alike: closeInput closes what it reads (its
// stdin, or the session over it) and it has grace to exit by itself
// (exited is closed once it has); then its process group gets SIGTERM, and
// killAfter later SIGKILL. Once it has exited, what it left in its group
// gets the same two steps. It returns when the server has exited and its
// group is gone (or was sent SIGKILL).
func StopProcess(closeInput func(), exited <-chan struct{}, g Group, grace, killAfter time.Duration) {
	closeInput()
	select {
	case <-exited:
	case <-time.After(grace):
		g.Terminate()
		select {
		case <-exited:
		case <-time.After(killAfter):
			g.Kill()
			<-exited
		}
	}
	g.reap(killAfter)
}

// reap ends what is left of the group after its leader has exited:
// SIGTERM, then SIGKILL after killAfter. The group is then let go of.
func (g Group) reap(killAfter time.Duration) {
	defer g.release()
	if !g.Alive() {
		return
	}
	g.Terminate()
	deadline := time.Now().Add(killAfter)
	for g.Alive() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if g.Alive() {
		g.Kill()
	}
}
