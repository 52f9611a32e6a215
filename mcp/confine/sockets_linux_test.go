package confine

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	state := servedControl(t)
	controlSock := filepath.Join(state, control.SocketName)

	bus := sessionBus(t)

	agent := filepath.Join(t.TempDir(), "agent.sock")
	listen(t, "unix", agent)

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
	addr := listen(t, "tcp", "127.0.0.1:0")
	got := runNosy(t, &Policy{Temp: filepath.Join(t.TempDir(), "tmp")}, "tcp:"+addr)
	if !got[0].OK {
		t.Errorf("confined TCP connect to %s: %s", addr, got[0].Err)
	}
}

// servedControl is a state folder with a control socket served in it, as
// the running app's, until the test ends.
func servedControl(t *testing.T) string {
	t.Helper()
	state := t.TempDir()
	ctl, err := control.Listen(state)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ctl.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-served })
	return state
}

// listen listens on network's addr ("@name": an abstract unix socket)
// until the test ends, accepting and closing every connection; it returns
// the address listened on.
func listen(t *testing.T, network, addr string) string {
	t.Helper()
	ln, err := net.Listen(network, addr)
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
	return ln.Addr().String()
}

// TestObservedServerConnectsOnlyInsideItsFolders: below Landlock ABI 9 an
// observed confined server may have stream unix sockets (a browser needs
// them), and each connect is checked: to a socket in its own folders it
// works; to the app's control socket, a session bus, an agent's socket in a
// temp folder, an abstract address, or through a symbolic link in its
// folder that leads outside, it is refused; a datagram unix socket stays
// refused; TCP works as asked.
func TestObservedServerConnectsOnlyInsideItsFolders(t *testing.T) {
	abi := needLandlock(t)
	if abi >= unixSocketABI {
		t.Skipf("Landlock ABI %d confines unix sockets itself: the observer sees no connect", abi)
	}
	root := t.TempDir()
	own := filepath.Join(root, "own.sock")
	listen(t, "unix", own)
	agent := filepath.Join(t.TempDir(), "agent.sock")
	listen(t, "unix", agent)
	os.Symlink(agent, filepath.Join(root, "link.sock"))
	abstract := "@rootkeeper-test-" + strconv.Itoa(os.Getpid())
	listen(t, "unix", abstract)
	bus := sessionBus(t)
	state := servedControl(t)
	tcp := listen(t, "tcp", "127.0.0.1:0")

	ops := []string{"connect:" + own, "connect:" + filepath.Join(state, control.SocketName), "connect:" + bus,
		"connect:" + agent, "connect:" + abstract, "connect:" + filepath.Join(root, "link.sock"),
		"udgram:" + own, "tcp:" + tcp}
	for _, o := range runNosy(t, nil, ops...) {
		if !o.OK && o.Op != "udgram" {
			t.Fatalf("unconfined %s %s failed (%s): the test cannot tell confinement apart", o.Op, o.Path, o.Err)
		}
	}
	res, _ := runObserved(t, Policy{Roots: []string{root}, Temp: filepath.Join(t.TempDir(), "tmp")}, func(context.Context, Attempt) string { return "" }, ops...)
	if !res[0].OK {
		t.Errorf("connect to a socket in its own folder: %s", res[0].Err)
	}
	for _, o := range res[1:6] {
		if o.OK {
			t.Errorf("confined connect to %s went through", o.Path)
		}
	}
	if o := res[6]; o.OK || !strings.Contains(o.Err, "permission denied") {
		t.Errorf("a datagram unix socket: %+v", o)
	}
	if o := res[7]; !o.OK {
		t.Errorf("TCP connect: %s", o.Err)
	}
}
