package mcp

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

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
