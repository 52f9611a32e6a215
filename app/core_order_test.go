package app

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// A reload that read the file before a revoke (or a pause) must never
// publish that older state after it: the revoked root would be visible
// again, and a server asking roots/list then would be given it. Reloads are
// hammered from two goroutines, and another process's store writes
// unrelated changes, while a poller reads the snapshot the way every
// roots/list answer does; once a revoke or a pause has returned, no answer
// may hold the root until the next grant or resume.
func TestNoStaleSnapshotAfterRevokeOrPause(t *testing.T) {
	store, core := openCore(t)
	root := t.TempDir()
	if err := core.Update(func(s *State) error {
		if err := s.AddServer(Server{Name: "fs", Type: TransportStdio, Command: "srv"}); err != nil {
			return err
		}
		return s.AddRoot(Root{Path: root, Enabled: true, Source: SourcePicked})
	}); err != nil {
		t.Fatal(err)
	}
	core.SetHealth(root, Health{Status: HealthOK})

	// other is the command line: a second store on the same folder.
	other, err := OpenStore(store.dir)
	if err != nil {
		t.Fatal(err)
	}

	var (
		// epoch is odd from the return of a revoke or pause until the next
		// grant or resume begins: a snapshot read within one odd epoch must
		// not show the root.
		epoch      atomic.Int64
		violations atomic.Int64
		answers    atomic.Int64
		stop       = make(chan struct{})
		wg         sync.WaitGroup
	)
	background := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					f()
				}
			}
		}()
	}
	background(func() { _ = core.Reload() })
	background(func() { _ = core.Reload() })
	// The command line writes an unrelated change, and the next one once
	// the core has published it.
	wg.Add(1)
	go func() {
		defer wg.Done()
		changed, unsubscribe := core.Subscribe()
		defer unsubscribe()
		for n := 0; ; n++ {
			want := []string{"/search", string(rune('a' + n%26))}
			if _, err := other.Update(func(s *State) error { s.SearchFolders = want; return nil }); err != nil {
				t.Error(err)
				return
			}
			for !slices.Equal(core.Snapshot().State.SearchFolders, want) {
				select {
				case <-stop:
					return
				case <-changed:
				}
			}
		}
	}()
	// The poller answers roots/list the way mcp does: Visible on the
	// current snapshot. answered hears of each answer.
	answered := make(chan struct{}, 1)
	background(func() {
		e1 := epoch.Load()
		visible := slices.Contains(VisiblePaths(core.Snapshot(), "fs"), root)
		e2 := epoch.Load()
		answers.Add(1)
		if e1 == e2 && e1%2 == 1 && visible {
			violations.Add(1)
		}
		select {
		case answered <- struct{}{}:
		default:
		}
	})

	grant := func(s *State) error {
		return s.Decide(Decision{Server: "fs", Root: root, Verdict: Allow, By: ByCommandLine})
	}
	revoke := func(s *State) error { s.Revoke("fs", root); return nil }
	for i := 0; i < 300; i++ {
		if err := core.Update(grant); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := core.Update(revoke); err != nil {
				t.Fatal(err)
			}
		} else {
			if err := core.Update(func(s *State) error { s.Paused = true; return nil }); err != nil {
				t.Fatal(err)
			}
		}
		epoch.Add(1) // odd: hidden from here
		// The poller answers once wholly within the hidden epoch: the
		// answer heard first may have begun before it, the next one not.
		select {
		case <-answered:
		default:
		}
		<-answered
		<-answered
		epoch.Add(1)
		if err := core.Update(func(s *State) error { s.Paused = false; return revoke(s) }); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if answers.Load() == 0 {
		t.Fatal("the poller never answered")
	}
	if v := violations.Load(); v > 0 {
		t.Fatalf("%d of %d answers after a revoke or pause still held the root", v, answers.Load())
	}
}
