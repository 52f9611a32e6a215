package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serve listens in dir and serves until the test ends or stop is called;
// stop returns once Serve has.
func serve(t *testing.T, dir string) (s *Server, stop func()) {
	t.Helper()
	s, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Serve(ctx); close(done) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return s, stop
}

func TestCallRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, _ := serve(t, dir)
	s.Handle("echo", func(_ context.Context, args json.RawMessage) (any, error) {
		var in map[string]string
		json.Unmarshal(args, &in)
		return map[string]string{"got": in["say"]}, nil
	})
	s.Handle("fail", func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("no can do") })

	var out map[string]string
	if err := Call(context.Background(), dir, "echo", map[string]string{"say": "hi"}, &out); err != nil || out["got"] != "hi" {
		t.Fatalf("echo: %v %v", out, err)
	}
	var pong string
	if err := Call(context.Background(), dir, "ping", nil, &pong); err != nil || pong != "pong" {
		t.Fatalf("ping: %q %v", pong, err)
	}
	if err := Call(context.Background(), dir, "fail", nil, nil); err == nil || err.Error() != "no can do" {
		t.Fatalf("fail: %v", err)
	}
	if err := Call(context.Background(), dir, "nope", nil, nil); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("unknown op: %v", err)
	}
}

func TestSocketIsPrivateAndRemovedOnStop(t *testing.T) {
	dir := t.TempDir()
	_, stop := serve(t, dir)
	path := filepath.Join(dir, SocketName)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("socket %v %v", fi, err)
	}
	stop()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
	if err := Call(context.Background(), dir, "ping", nil, nil); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("after stop: %v", err)
	}
}

func TestSecondListenerIsRefusedButAStaleSocketIsReplaced(t *testing.T) {
	dir := t.TempDir()
	serve(t, dir)
	if _, err := Listen(dir); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second Listen: %v", err)
	}

	// A socket file left by a process that died (nobody listening).
	stale := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(stale, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Stat(filepath.Join(stale, SocketName)); err != nil {
		t.Fatalf("stale socket not there: %v", err)
	}
	s, err := Listen(stale)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go s.Serve(ctx)
	if err := Call(ctx, stale, "ping", nil, nil); err != nil {
		t.Fatalf("ping after replacing a stale socket: %v", err)
	}
}

func TestGarbageRequestGetsAnError(t *testing.T) {
	dir := t.TempDir()
	serve(t, dir)
	conn, err := net.Dial("unix", filepath.Join(dir, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("not json\n"))
	var resp struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(conn).Decode(&resp); err != nil || resp.OK || !strings.Contains(resp.Error, "bad request") {
		t.Fatalf("%+v %v", resp, err)
	}
}

// When accepting fails, Serve returns the error; run again (as the app's
// supervisor does) it makes the socket anew and answers.
func TestServeRestartsAfterAFailure(t *testing.T) {
	dir := t.TempDir()
	s, err := Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx) }()
	if err := Call(ctx, dir, "ping", nil, nil); err != nil {
		t.Fatal(err)
	}
	s.ln.Close() // the listener dies under Serve
	if err := <-errc; err == nil {
		t.Fatal("Serve returned nil after its listener died")
	}
	go func() { errc <- s.Serve(ctx) }()
	var pong string
	deadline := time.Now().Add(5 * time.Second)
	for Call(ctx, dir, "ping", nil, &pong) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the restarted Serve does not answer")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("Serve after ctx ended: %v", err)
	}
}

// TestStreamKeepsTheConnection: a stream op answers ok, then both sides
// exchange lines past the request's read deadline; it needs the token like
// any op, and the app quitting ends it.
func TestStreamKeepsTheConnection(t *testing.T) {
	dir := t.TempDir()
	// Set before Serve starts (it reads the timeout for every connection),
	// restored after serve's own cleanup has stopped it.
	old := ReadTimeout
	ReadTimeout = 100 * time.Millisecond
	t.Cleanup(func() { ReadTimeout = old })
	s, stop := serve(t, dir)
	s.HandleStream("echo", func(ctx context.Context, args json.RawMessage, conn net.Conn) error {
		r := bufio.NewReader(conn)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return err
			}
			conn.Write(append(append([]byte{}, args...), line...))
		}
	})
	conn, r, err := Dial(context.Background(), dir, "echo", "x")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	time.Sleep(3 * ReadTimeout) // past the request line's deadline
	for _, say := range []string{"one\n", "two\n"} {
		conn.Write([]byte(say))
		got, err := r.ReadString('\n')
		if err != nil || got != `"x"`+say {
			t.Fatalf("echo of %q: %q %v", say, got, err)
		}
	}

	os.WriteFile(filepath.Join(dir, TokenName), []byte("forged"), 0o600)
	if _, _, err := Dial(context.Background(), dir, "echo", nil); err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("stream without the token: %v", err)
	}

	stop()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("the stream outlived the app")
	}
}
