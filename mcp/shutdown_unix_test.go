//go:build unix

package mcp

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// TestShutdownEndsProcessGroup: when Run returns, the server and the child
// it left in its process group are gone.
func TestShutdownEndsProcessGroup(t *testing.T) {
	bin := rootServer(t)
	r := listenReports(t)
	e := newEnv(t)
	e.addRootServer(bin, r, "parent", "", "-spawn-child")
	e.start(e.fastOptions())
	var st struct {
		PID   int `json:"pid"`
		Child int `json:"child"`
	}
	json.Unmarshal(r.next(t, "parent", "start").payload, &st)
	if st.PID == 0 || st.Child == 0 {
		t.Fatalf("start report %+v", st)
	}
	e.waitConnected("parent")
	if got := e.status("parent").PID; got != st.PID {
		t.Errorf("status PID %d, want %d", got, st.PID)
	}
	e.shutdown()
	if s := e.status("parent"); s.State != app.ServerStopped {
		t.Errorf("state after shutdown %q, want stopped", s.State)
	}
	apptest.Eventually(t, "the server and its child to end with the shutdown", func() (bool, string) {
		return !alive(st.PID) && !alive(st.Child), fmt.Sprintf("server alive %v, child alive %v", alive(st.PID), alive(st.Child))
	})
}

// TestStopAndRestart: Stop ends the server until Restart.
func TestStopAndRestart(t *testing.T) {
	bin := rootServer(t)
	r := listenReports(t)
	e := newEnv(t)
	a := mkRoot(t, "a")
	e.addRootServer(bin, r, "s", "")
	e.addRoots(a)
	e.grant("s", a)
	e.start(e.fastOptions())
	r.expectRoots(t, "s", app.URIFromPath(a))
	pid := e.waitConnected("s").PID
	e.m.Stop("s")
	apptest.Eventually(t, "stopped", func() (bool, string) {
		st := e.status("s")
		return st.State == app.ServerStopped && !alive(pid), string(st.State)
	})
	e.m.Restart("s")
	r.expectRoots(t, "s", app.URIFromPath(a))
	if st := e.waitConnected("s"); st.PID == pid || st.Restarts != 1 {
		t.Errorf("after restart: pid %d (was %d), restarts %d", st.PID, pid, st.Restarts)
	}
}
