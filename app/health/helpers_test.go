package health

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

const waitFor = 10 * time.Second

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
	deadline := time.Now().Add(waitFor)
	for {
		h, had := core.Snapshot().Health[path]
		if had && ok(h) {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: health is %+v (recorded: %v), want %s", path, h, had, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitStatus(t testing.TB, core *app.Core, path string, want app.HealthStatus) app.Health {
	t.Helper()
	return waitHealth(t, core, path, string(want), func(h app.Health) bool { return h.Status == want })
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

// childEnv marks a test binary re-executed as an unprivileged user.
const childEnv = "ROOTKEEPER_HEALTH_CHILD"

// asNobody reports whether the calling test should run its scenario in this
// process: it is unprivileged already (or is the re-executed child). As root
// it re-executes the test binary, running only test t, as uid/gid 65534 with
// a temp folder and HOME it owns, reports the child's result, and returns
// false. chmod 000 proves nothing to root, who reads anyway.
func asNobody(t *testing.T) bool {
	t.Helper()
	if os.Getenv(childEnv) != "" || os.Getuid() != 0 {
		return true
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("running as root and setpriv is not available to drop privileges: %v", err)
	}
	// The test binary sits in a folder only root may enter; copy it out.
	binDir := t.TempDir()
	for d := binDir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(binDir, filepath.Base(self))
	copyFile(t, self, bin, 0o755)
	home := filepath.Join(binDir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
		bin, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), childEnv+"=1", "HOME="+home, "TMPDIR="+home)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("unprivileged child failed (%v):\n%s", err, out)
	}
	t.Logf("unprivileged child:\n%s", out)
	return false
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }

// must fails the test on err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
