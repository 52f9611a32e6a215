package mcp

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// TestHungServerDoesNotDelayOthers: a server that stopped reading stdin,
// with a write to it stuck, does not keep another server from hearing of
// a change they share. The write is seen stuck when the server's stdin
// pipe is full.
func TestHungServerDoesNotDelayOthers(t *testing.T) {
	bin := rootServer(t)
	r := listenReports(t)
	e := newEnv(t)
	a, b := mkRoot(t, "a"), mkRoot(t, "b")
	e.addRootServer(bin, r, "hung", "", "-hang")
	e.addRootServer(bin, r, "fine", "")
	e.addRoots(a, b)
	e.grant("hung", a)
	e.grant("fine", a)
	e.start(e.fastOptions())
	r.expectRoots(t, "hung", app.URIFromPath(a))
	r.expectRoots(t, "fine", app.URIFromPath(a))
	e.waitConnected("hung")

	// Fill the hung server's stdin: this call blocks in the write, holding
	// the connection's write lock.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stuck := make(chan error, 1)
	go func() {
		_, err := e.m.CallTool(ctx, "hung", "roots", map[string]any{"pad": strings.Repeat("x", 4<<20)})
		stuck <- err
	}()
	pid := e.status("hung").PID
	apptest.Eventually(t, "the hung server's stdin full", func() (bool, string) {
		select {
		case err := <-stuck:
			t.Fatalf("the call to the hung server returned (%v); it should be stuck", err)
		default:
		}
		queued, size, err := pipeFill(pid, 0)
		return err == nil && queued > size-os.Getpagesize(), fmt.Sprintf("%d of %d bytes (%v)", queued, size, err)
	})

	e.update(func(s *app.State) error {
		for _, srv := range []string{"hung", "fine"} {
			if err := s.Decide(app.Decision{Server: srv, Root: b, Verdict: app.Allow}); err != nil {
				return err
			}
		}
		return nil
	})
	r.expectRoots(t, "fine", app.URIFromPath(a), app.URIFromPath(b))
	e.update(func(s *app.State) error { s.Revoke("fine", a); return nil })
	r.expectRoots(t, "fine", app.URIFromPath(b))
}

// pipeFill is how many bytes wait in the pipe that is process pid's file
// descriptor fd, and how many it holds: read through a descriptor of its
// own on the same pipe, which reads nothing.
func pipeFill(pid, fd int) (queued, size int, err error) {
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/%d", pid, fd), os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	raw, err := f.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var qerr, serr error
	if err := raw.Control(func(d uintptr) {
		queued, qerr = unix.IoctlGetInt(int(d), unix.TIOCINQ)
		size, serr = unix.FcntlInt(d, unix.F_GETPIPE_SZ, 0)
	}); err != nil {
		return 0, 0, err
	}
	if qerr != nil {
		return 0, 0, qerr
	}
	return queued, size, serr
}
