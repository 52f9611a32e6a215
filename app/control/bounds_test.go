package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"rootkeeper/app/apptest"
)

type rawResponse struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// TestFloodIsBounded: clients that send megabytes without a newline (the
// review took an app to 3.88 GB this way) are cut off at MaxRequest: each
// gets an error and a closed connection long before its flood is written.
// What a client wrote before the close is at most the request's bound and
// what the socket's buffers hold: the server read no more than that of it
// (a server that read on would take the whole 32 MiB).
func TestFloodIsBounded(t *testing.T) {
	dir := tempDir(t)
	serve(t, dir)
	const flooders, flood = 8, 32 << 20
	chunk := bytes.Repeat([]byte("A"), 64<<10)
	var wg sync.WaitGroup
	var maxSent atomic.Int64
	errs := make(chan string, flooders)
	for range flooders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := rawDial(dir)
			if err != nil {
				errs <- err.Error()
				return
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(20 * time.Second))
			sent := 0
			for sent < flood {
				n, err := conn.Write(chunk)
				sent += n
				if err != nil {
					break
				}
			}
			for {
				old := maxSent.Load()
				if int64(sent) <= old || maxSent.CompareAndSwap(old, int64(sent)) {
					break
				}
			}
			if sent >= flood {
				errs <- "the whole flood was accepted"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	t.Logf("%d clients × %d MiB without a newline: at most %d KiB written before the close", flooders, flood>>20, maxSent.Load()>>10)
	// The request's bound, the socket buffers both ways (a few hundred
	// KiB on Linux, 64 KiB for a Windows pipe) and one chunk in flight.
	if bound := int64(MaxRequest + 2<<20); maxSent.Load() > bound {
		t.Errorf("a client wrote %d bytes before the close, more than the %d the server may have read of it", maxSent.Load(), bound)
	}

	// A flood is told why, and the app still answers.
	conn, err := rawDial(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() { conn.Write(bytes.Repeat([]byte("B"), MaxRequest+10)) }()
	var resp rawResponse
	if err := json.NewDecoder(conn).Decode(&resp); err != nil || resp.OK || !strings.Contains(resp.Error, "longer than 65536 bytes") {
		t.Errorf("response to an over-long request: %+v %v", resp, err)
	}
	var pong string
	if err := Call(context.Background(), dir, "ping", nil, &pong); err != nil || pong != "pong" {
		t.Errorf("ping after the flood: %q %v", pong, err)
	}
}

// TestTooManyConnections: MaxConns idle connections hold every slot; the
// next one is told "busy" and closed at once; once one goes, calls are
// answered again.
func TestTooManyConnections(t *testing.T) {
	dir := tempDir(t)
	serve(t, dir)
	var idle []net.Conn
	for range MaxConns {
		c, err := rawDial(dir)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := Call(ctx, dir, "ping", nil, nil); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("call past %d connections: %v, want busy", MaxConns, err)
	}
	idle[0].Write([]byte(`{"op":"ping"}` + "\n"))
	io.ReadAll(idle[0])
	// The slot frees once the server has seen the connection go.
	apptest.Eventually(t, "a call answered after a connection went", func() (bool, string) {
		err := Call(context.Background(), dir, "ping", nil, nil)
		return err == nil, fmt.Sprint(err)
	})
}

// TestSlowClientIsClosed: a client that does not finish its line within
// ReadTimeout is disconnected, and its slot freed.
func TestSlowClientIsClosed(t *testing.T) {
	old := ReadTimeout
	ReadTimeout = 200 * time.Millisecond
	t.Cleanup(func() { ReadTimeout = old })
	dir := tempDir(t)
	serve(t, dir)
	c, err := rawDial(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(`{"op":`))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := io.ReadAll(c); err != nil || len(b) != 0 {
		t.Errorf("a slow client got %q, %v; want the connection closed", b, err)
	}
}

// TestBridgeSessionNeedsTheToken: an op other than ping without the token
// in the state folder (a forged bridge session from a process that cannot
// read the state folder) is refused and its handler never runs; Call,
// which reads the token, is answered. The token file is the user's alone
// and goes when the app stops.
func TestBridgeSessionNeedsTheToken(t *testing.T) {
	dir := tempDir(t)
	s, stop := serve(t, dir)
	var seen atomic.Int32
	s.Handle("bridge", func(context.Context, json.RawMessage) (any, error) {
		seen.Add(1)
		return "ok", nil
	})
	fi, err := os.Stat(filepath.Join(dir, TokenName))
	// Windows has no mode bits: there the state folder's ACL keeps the
	// token the user's.
	if err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) || fi.Size() < 32 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	// Written in one step: nothing but the socket and the token is left
	// (on Windows the token alone: the pipe is no file).
	want := 2
	if runtime.GOOS == "windows" {
		want = 1
	}
	if entries, _ := os.ReadDir(dir); len(entries) != want {
		t.Errorf("the state folder holds %v; want the socket and the token only", entries)
	}
	forged := []string{
		`{"op":"bridge","args":{"server":"fs","host":"evil"}}`,
		`{"op":"bridge","args":{"server":"fs"},"token":""}`,
		`{"op":"bridge","args":{"server":"fs"},"token":"0000000000000000000000000000000000000000000000000000000000000000"}`,
		`{"op":"status"}`,
	}
	for _, req := range forged {
		c, err := rawDial(dir)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(req + "\n"))
		var resp rawResponse
		err = json.NewDecoder(c).Decode(&resp)
		c.Close()
		if err != nil || resp.OK || !strings.Contains(resp.Error, "token") {
			t.Errorf("%s: %+v %v; want refused for want of the token", req, resp, err)
		}
	}
	if n := seen.Load(); n != 0 {
		t.Fatalf("the bridge handler ran %d time(s) for forged requests", n)
	}
	if err := Call(context.Background(), dir, "bridge", map[string]string{"server": "fs"}, nil); err != nil || seen.Load() != 1 {
		t.Fatalf("a bridge with the token: %v (handler ran %d)", err, seen.Load())
	}
	stop()
	if _, err := os.Stat(filepath.Join(dir, TokenName)); !os.IsNotExist(err) {
		t.Errorf("token left behind: %v", err)
	}
}
