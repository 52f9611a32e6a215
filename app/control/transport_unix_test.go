//go:build !windows

package control

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

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
}

func TestStaleSocketIsReplaced(t *testing.T) {
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
	if _, err := Listen(stale); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("Listen over a live socket: %v", err)
	}
}
