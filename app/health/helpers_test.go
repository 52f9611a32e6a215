package health

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fsnotify/fsnotify"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// newCore is a core with a fresh state folder.
func newCore(t testing.TB) *app.Core {
	t.Helper()
	core, _ := apptest.NewCore(t)
	return core
}

// mkdir makes a folder (and its parents) and returns its canonical path.
func mkdir(t testing.TB, parts ...string) string {
	t.Helper()
	p := filepath.Join(parts...)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	canon, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return canon
}

// addRoots adds enabled roots, shared with server "fs".
func addRoots(t testing.TB, core *app.Core, roots ...app.Root) {
	t.Helper()
	err := core.Update(func(s *app.State) error {
		if _, ok := s.Server("fs"); !ok {
			if err := s.AddServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: "true"}); err != nil {
				return err
			}
		}
		return apptest.Share(s, "fs", roots...)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func addPaths(t testing.TB, core *app.Core, paths ...string) {
	t.Helper()
	roots := make([]app.Root, len(paths))
	for i, p := range paths {
		roots[i] = app.Root{Path: p}
	}
	addRoots(t, core, roots...)
}

// checkCounter counts checks per path.
type checkCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *checkCounter) hook(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[path]++
}

func (c *checkCounter) get(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[path]
}

func (c *checkCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.n {
		n += v
	}
	return n
}

// start runs m until the test ends and checks that Run returned nil.
func start(t testing.TB, m *Monitor) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// waitHealth waits until the health of path satisfies ok, and returns it.
func waitHealth(t testing.TB, core *app.Core, path string, what string, ok func(app.Health) bool) app.Health {
	t.Helper()
	snap := apptest.Until(t, core, path+": "+what, func(s *app.Snapshot) bool {
		h, had := s.Health[path]
		return had && ok(h)
	})
	return snap.Health[path]
}

func waitStatus(t testing.TB, core *app.Core, path string, want app.HealthStatus) app.Health {
	t.Helper()
	return waitHealth(t, core, path, string(want), func(h app.Health) bool { return h.Status == want })
}

// check is m.Check, failing the test on an error.
func check(t testing.TB, m *Monitor, path string) app.Health {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), apptest.Patience)
	defer cancel()
	h, err := m.Check(ctx, path)
	if err != nil {
		t.Fatalf("Check(%s): %v", path, err)
	}
	return h
}

// noMounts stands in for the mount table's watch in a synctest bubble.
func noMounts(ctx context.Context, _ chan<- struct{}) error {
	<-ctx.Done()
	return nil
}

func visible(core *app.Core) []string { return app.VisiblePaths(core.Snapshot(), "fs") }

// limitWatcher is a real fsnotify watcher whose Add fails with err for the
// paths fail selects.
type limitWatcher struct {
	Watcher
	err  error
	fail func(path string) bool
	adds atomic.Int64
}

func (w *limitWatcher) Add(path string) error {
	w.adds.Add(1)
	if w.fail(path) {
		return &os.PathError{Op: "inotify_add_watch", Path: path, Err: w.err}
	}
	return w.Watcher.Add(path)
}

// silentWatcher accepts every watch and reports nothing, except errors a
// test sends.
type silentWatcher struct {
	events chan fsnotify.Event
	errs   chan error
}

func newSilentWatcher() *silentWatcher {
	return &silentWatcher{events: make(chan fsnotify.Event), errs: make(chan error, 1)}
}

func (*silentWatcher) Add(string) error                { return nil }
func (*silentWatcher) Remove(string) error             { return nil }
func (w *silentWatcher) Events() <-chan fsnotify.Event { return w.events }
func (w *silentWatcher) Errors() <-chan error          { return w.errs }
func (*silentWatcher) Close() error                    { return nil }

func contains(list []string, s string) bool { return slices.Contains(list, s) }

// must fails the test on err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
