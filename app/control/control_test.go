package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"rootkeeper/app/apptest"
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

// tempDir is t.TempDir, but removed file by file: under Wine 8 the
// os.RemoveAll that t.TempDir cleans up with fails ("Invalid function":
// Wine does not know FileDispositionInformationEx, which Go 1.26 deletes
// with), and these tests run there too.
func tempDir(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "windows" {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("", "control-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var paths []string
		filepath.WalkDir(dir, func(p string, _ fs.DirEntry, _ error) error {
			paths = append(paths, p)
			return nil
		})
		for i := len(paths) - 1; i >= 0; i-- {
			os.Remove(paths[i])
		}
	})
	return dir
}

// rawDial connects to the control channel of dir as a client that speaks
// for itself: no request is sent.
func rawDial(dir string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return dial(ctx, dir)
}

func TestCallRoundTrip(t *testing.T) {
	dir := tempDir(t)
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

// TestSecondListenerIsRefusedAndGoneAfterStop: while an app listens, a
// second one in the same state folder is refused; once it stops, nobody
// answers there and the channel can be opened again.
func TestSecondListenerIsRefusedAndGoneAfterStop(t *testing.T) {
	dir := tempDir(t)
	_, stop := serve(t, dir)
	if _, err := Listen(dir); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second Listen: %v", err)
	}
	stop()
	if err := Call(context.Background(), dir, "ping", nil, nil); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("after stop: %v", err)
	}
	serve(t, dir)
	if err := Call(context.Background(), dir, "ping", nil, nil); err != nil {
		t.Fatalf("ping after listening again: %v", err)
	}
}

func TestGarbageRequestGetsAnError(t *testing.T) {
	dir := tempDir(t)
	serve(t, dir)
	conn, err := rawDial(dir)
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
	dir := tempDir(t)
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
	apptest.Eventually(t, "the restarted Serve to answer", func() (bool, string) {
		err := Call(ctx, dir, "ping", nil, &pong)
		return err == nil, fmt.Sprint(err)
	})
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("Serve after ctx ended: %v", err)
	}
}

// TestStreamKeepsTheConnection: a stream op answers ok, then both sides
// exchange lines; it needs the token like any op, and the app quitting
// ends it. (TestStreamOutlivesTheRequestDeadline: past the request's read
// deadline too.)
func TestStreamKeepsTheConnection(t *testing.T) {
	dir := tempDir(t)
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

// TestStreamOutlivesTheRequestDeadline: the read deadline of a stream's
// request line no longer applies once it is answered: lines go both ways
// long after it. The connection is served over net.Pipe in a synctest
// bubble, whose clock jumps past the deadline at once.
func TestStreamOutlivesTheRequestDeadline(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a pipe's peer is known there by its handle, which net.Pipe has not")
	}
	synctest.Test(t, func(t *testing.T) {
		s := &Server{handlers: map[string]Handler{}, streams: map[string]StreamHandler{}, token: "secret"}
		s.HandleStream("echo", func(ctx context.Context, args json.RawMessage, conn net.Conn) error {
			r := bufio.NewReader(conn)
			for {
				line, err := r.ReadBytes('\n')
				if err != nil {
					return err
				}
				conn.Write(line)
			}
		})
		client, server := net.Pipe()
		defer client.Close()
		served := make(chan struct{})
		go func() { s.serveConn(context.Background(), server); close(served) }()
		client.Write([]byte(`{"op":"echo","token":"secret"}` + "\n"))
		r := bufio.NewReader(client)
		if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, `"ok":true`) {
			t.Fatalf("answer to the stream's request: %q %v", line, err)
		}
		time.Sleep(3 * ReadTimeout) // the bubble's clock: past the request line's deadline
		client.Write([]byte("still here\n"))
		if line, err := r.ReadString('\n'); err != nil || line != "still here\n" {
			t.Fatalf("echo past the request's deadline: %q %v", line, err)
		}
		client.Close()
		<-served
	})
}
