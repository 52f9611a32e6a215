package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/mcp/confine"
)

// TestReachWatchStaysBounded: ten thousand attempts in ten thousand
// folders (no one answers; each wait already over) leave the watch's cache
// and the state bounded: at most the limiter's burst of requests, at most
// maxFolderCache folders remembered.
func TestReachWatchStaysBounded(t *testing.T) {
	e := newEnv(t)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: "nosy", Confine: true})
	})
	w := NewReachWatch(e.core, nil, nil, "nosy", e.dir)
	base := mkRoot(t, "probed")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 10000 {
		dir := filepath.Join(base, fmt.Sprintf("d%05d", i))
		// A create: asked about though the file does not exist yet.
		if got := w.Reach(ctx, confine.Attempt{Op: "create", Path: filepath.Join(dir, "f"), CanHand: true}); got != "" {
			t.Fatalf("an unanswered attempt was handed %q", got)
		}
	}
	if n := len(w.folders); n > maxFolderCache {
		t.Errorf("%d folders cached, bound %d", n, maxFolderCache)
	}
	// Nobody was asked: the requests are written in the background.
	apptest.Eventually(t, "requests kept for the person", func() (bool, string) {
		n := len(e.core.Snapshot().State.RequestsFor("nosy"))
		return n > 0, ""
	})
	if n := len(e.core.Snapshot().State.RequestsFor("nosy")); n > w.Limiter.Burst+1 {
		t.Errorf("%d requests from 10,000 attempts (burst %d)", n, w.Limiter.Burst)
	}
}

// TestReachWatchHandsANeed: a confined server's read of ~/.kube/config
// waits while the person is asked; allowed, ~/.kube is a folder that
// server needs to run (no root), and the waiting read is handed its file
// beneath it at once, as for an allowed root, while the server restarts.
func TestReachWatchHandsANeed(t *testing.T) {
	e := newEnv(t)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "k8s", Type: app.TransportStdio, Command: "k8s", Confine: true})
	})
	kube := mkRoot(t, "kube") // a folder, not a root
	config := filepath.Join(kube, "config")
	if err := os.WriteFile(config, []byte("clusters: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := NewReachWatch(e.core, nil, nil, "k8s", e.dir)
	w.CanAsk = func() bool { return true }
	handed := make(chan string, 1)
	go func() {
		handed <- w.Reach(context.Background(), confine.Attempt{Op: app.OpRead, Path: config, CanHand: true})
	}()
	apptest.Eventually(t, "the read waiting on the person", func() (bool, string) {
		r, ok := e.core.Snapshot().State.Request("k8s", kube)
		return ok && len(r.Calls) == 1, ""
	})
	e.update(func(s *app.State) error {
		_, err := s.AllowAsked("k8s", kube, app.Always, app.ByDialog, time.Now().UTC(), app.NeedPlace{StateDir: e.dir})
		return err
	})
	if got := <-handed; got != kube {
		t.Errorf("the waiting read was handed %q, want its file beneath %s", got, kube)
	}
	if _, isRoot := e.core.Snapshot().State.Root(kube); isRoot {
		t.Errorf("%s became a root", kube)
	}
}
