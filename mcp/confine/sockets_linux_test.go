package confine

import (
	"bufio"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rootkeeper/app/control"
)

// sessionBus starts a D-Bus session bus for the test and returns the path
// of its socket.
func sessionBus(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address", "--address=unix:dir="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("dbus-daemon (run .ci/setup): %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	for _, part := range strings.Split(strings.TrimSpace(strings.TrimPrefix(addr, "unix:")), ",") {
		if p, ok := strings.CutPrefix(part, "path="); ok {
			return p
		}
	}
	t.Fatalf("dbus-daemon address %q has no path", addr)
	return ""
}

// TestConfinedServerReachesNoUnixSocket: a confined server can connect
// neither to a running app's control socket, nor to a D-Bus session bus,
// nor to a unix socket listening in a temp folder (an agent's, say),
// while a socket pair between it and its children still works. The same
// binary unconfined reaches all three, so the test can tell.
func TestConfinedServerReachesNoUnixSocket(t *testing.T) {
	abi := needLandlock(t)
	if abi >= unixSocketABI {
		t.Logf("Landlock ABI %d confines unix sockets itself; the system call filter is not used", abi)
	}
	state := t.TempDir()
	ctl, err := control.Listen(state)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ctl.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-served })
	controlSock := filepath.Join(state, control.SocketName)

	bus := sessionBus(t)

	agent := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", agent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()

	ops := []string{"connect:" + controlSock, "connect:" + bus, "connect:" + agent, "socketpair:stream"}
	for _, o := range runNosy(t, nil, ops...) {
		if !o.OK {
			t.Fatalf("unconfined %s %s failed (%s): the test cannot tell confinement apart", o.Op, o.Path, o.Err)
		}
	}
	temp := filepath.Join(t.TempDir(), "tmp")
	got := runNosy(t, &Policy{Temp: temp}, append(ops, "socketpair:dgram")...)
	for _, o := range got[:3] {
		if o.OK || !strings.Contains(o.Err, "permission denied") {
			t.Errorf("confined connect to %s: ok=%v err=%q; want permission denied", o.Path, o.OK, o.Err)
		}
	}
	if o := got[3]; !o.OK {
		t.Errorf("confined socketpair(AF_UNIX, SOCK_STREAM) failed: %s", o.Err)
	}
	if o := got[4]; abi < unixSocketABI && o.OK {
		t.Errorf("confined socketpair(AF_UNIX, SOCK_DGRAM) worked: a datagram socket can send to any named socket")
	}
	// The app still answers its owner.
	cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer ccancel()
	var pong string
	if err := control.Call(cctx, state, "ping", nil, &pong); err != nil || pong != "pong" {
		t.Errorf("control ping after the test: %q, %v", pong, err)
	}
}

// TestConfinedServerKeepsTheNetwork: the filter takes only unix sockets:
// TCP still works (the network is not confined).
func TestConfinedServerKeepsTheNetwork(t *testing.T) {
	needLandlock(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	got := runNosy(t, &Policy{Temp: filepath.Join(t.TempDir(), "tmp")}, "tcp:"+ln.Addr().String())
	if !got[0].OK {
		t.Errorf("confined TCP connect to %s: %s", ln.Addr(), got[0].Err)
	}
}
