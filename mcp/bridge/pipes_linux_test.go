package bridge

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// The host's side as real hosts give it: socket pairs (Node's
// child_process, so Claude Code, VS Code, Cursor…) or pipes (a shell,
// Python's subprocess). The bridge's ends stay blocking, as the host gave
// them: a description the bridge shares must not change under anyone.

// socketPipes gives the bridge one end of a socket pair for its stdin and
// another for its stdout, blocking as a child gets them.
func socketPipes(t *testing.T) (io.ReadCloser, io.WriteCloser, io.ReadCloser, io.WriteCloser) {
	pair := func() (*os.File, *os.File) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fds[0]), "bridge"), os.NewFile(uintptr(fds[1]), "host")
	}
	hostIn, bridgeIn := pair()
	hostOut, bridgeOut := pair()
	return hostIn, bridgeIn, bridgeOut, hostOut
}

// osPipes gives the bridge pipes, blocking on its side.
func osPipes(t *testing.T) (io.ReadCloser, io.WriteCloser, io.ReadCloser, io.WriteCloser) {
	pipe := func() (*os.File, *os.File) {
		var p [2]int
		if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1")
	}
	hostIn, bridgeIn := pipe()
	bridgeOut, hostOut := pipe()
	return hostIn, bridgeIn, bridgeOut, hostOut
}

// keptBlocking wraps pipes so that check tells whether the bridge's ends
// are still blocking.
func keptBlocking(t *testing.T, pipes hostPipes) (hostPipes, func()) {
	var files []*os.File
	wrapped := func(t *testing.T) (io.ReadCloser, io.WriteCloser, io.ReadCloser, io.WriteCloser) {
		hostIn, bridgeIn, bridgeOut, hostOut := pipes(t)
		files = append(files, hostIn.(*os.File), hostOut.(*os.File))
		return hostIn, bridgeIn, bridgeOut, hostOut
	}
	return wrapped, func() {
		t.Helper()
		for _, f := range files {
			rc, _ := f.SyscallConn()
			rc.Control(func(fd uintptr) {
				flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
				if err != nil || flags&unix.O_NONBLOCK != 0 {
					t.Errorf("the host's %s is left non-blocking (flags %#o, %v)", f.Name(), flags, err)
				}
			})
		}
	}
}

// Over a socket pair and over pipes, a call goes through, a 15 MiB
// message goes both ways whole (the bridge's writes wait for the other
// side), a 17 MiB one is refused and the session goes on, and the host's
// descriptors are left as the host made them.
func TestHostOverSocketsAndPipes(t *testing.T) {
	for name, pipes := range map[string]hostPipes{"socket pair": socketPipes, "pipes": osPipes} {
		t.Run(name, func(t *testing.T) {
			pipes, blocking := keptBlocking(t, pipes)
			f := startOn(t, pipes, app.Server{Command: apptest.Program(t, "mcp/bridge/testdata/inputserver")}, nil, nil)
			h := f.h
			h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}})
			h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
			if got := h.tool("echo", map[string]any{"text": "hi"}, nil); got != "hi" {
				t.Fatalf("echo answered %q", got)
			}
			blocking()
			big := strings.Repeat("0123456789abcdef", 15<<16)
			if got := h.tool("echo", map[string]any{"text": big}, nil); got != big {
				t.Fatalf("15 MiB through: got %d bytes back, want %d the same", len(got), len(big))
			}
			var r struct{ Error struct{ Message string } }
			json.Unmarshal(h.call("resources/read", map[string]any{"uri": fmt.Sprintf("mem://%d", 17<<20)}), &r)
			if !strings.Contains(r.Error.Message, "longer than 16 MiB") {
				t.Errorf("a 17 MiB reply: error %q; want one saying longer than 16 MiB", r.Error.Message)
			}
			if got := h.tool("echo", map[string]any{"text": "still here"}, nil); got != "still here" {
				t.Errorf("after the refusal the bridge answers %q", got)
			}
			blocking()
		})
	}
}

// A host that stops reading holds the bridge's writes to it (they wait
// for it in poll), not the bridge: when the host then closes its side,
// the session ends.
func TestHostThatStopsReadingCanStillEnd(t *testing.T) {
	var hostEnd *os.File
	gate := &gatedReader{open: make(chan struct{})}
	close(gate.open)
	pipes := func(t *testing.T) (io.ReadCloser, io.WriteCloser, io.ReadCloser, io.WriteCloser) {
		hostIn, bridgeIn, bridgeOut, hostOut := socketPipes(t)
		hostEnd, gate.r = bridgeOut.(*os.File), bridgeOut
		return hostIn, bridgeIn, gate, hostOut
	}
	f := startOn(t, pipes, app.Server{Command: apptest.Program(t, "mcp/bridge/testdata/inputserver")}, nil, nil)
	t.Cleanup(gate.resume)
	h := f.h
	h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}})
	h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	gate.pause()
	h.send(map[string]any{"jsonrpc": "2.0", "id": "big", "method": "resources/read", "params": map[string]any{"uri": fmt.Sprintf("mem://%d", 8<<20)}})
	apptest.Eventually(t, "the host's socket to fill with what it does not read", func() (bool, string) {
		rc, _ := hostEnd.SyscallConn()
		n := 0
		rc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
		return n >= 64<<10, fmt.Sprintf("%d bytes queued", n)
	})
	h.in.(io.Closer).Close()
	select {
	case err := <-f.done:
		f.done <- err // for the fixture's cleanup
	case <-time.After(wait):
		t.Fatal("the bridge did not end when the host closed its side while not reading")
	}
}

// gatedReader reads r while open is closed.
type gatedReader struct {
	r    io.Reader
	mu   sync.Mutex
	open chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	<-open
	return g.r.Read(p)
}

func (g *gatedReader) Close() error { return g.r.(io.Closer).Close() }

func (g *gatedReader) pause() {
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedReader) resume() {
	g.mu.Lock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
	g.mu.Unlock()
}
