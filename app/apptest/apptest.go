// Package apptest is what the tests of several packages share: a Core on a
// fresh state folder, the real MCP servers that .ci/setup installs from
// npm, test programs built once, a private Secret Service, one way to wait
// (Until on a core's changes; Eventually for what has no event, failing
// only on a hang, and Poll for another bound or pace), one way to run a
// test unprivileged (AsNobody, RunAsNobody), and one way to skip for want
// of something (Missing: under CI, a failure). It is imported by tests
// only.
package apptest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"rootkeeper/app"
)

// ModuleRoot is the folder holding go.mod, found upwards from the test's
// working folder.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working folder")
		}
		dir = parent
	}
}

// NPMServer is the path of an installed test server's executable, such as
// "mcp-server-filesystem". A missing server fails the test (run .ci/setup);
// only with -short is it skipped.
func NPMServer(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(ModuleRoot(t), ".ci", "npm", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		if testing.Short() {
			t.Skipf("%s is not installed (run .ci/setup); skipped with -short", name)
		}
		t.Fatalf("%s is not installed (run .ci/setup): %v", name, err)
	}
	return p
}

// NewCore opens a Core on a new state folder, which it returns too.
func NewCore(t testing.TB) (*app.Core, string) {
	t.Helper()
	dir := t.TempDir()
	store, err := app.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	core, err := app.NewCore(store)
	if err != nil {
		t.Fatal(err)
	}
	return core, dir
}

// Share adds roots to s, enabled, each with an allow decision for server
// (which must exist). A root without a Source is marked picked by hand.
func Share(s *app.State, server string, roots ...app.Root) error {
	for _, r := range roots {
		r.Enabled = true
		if r.Source == "" {
			r.Source = app.SourcePicked
		}
		if err := s.AddRoot(r); err != nil {
			return err
		}
		if err := s.Decide(app.Decision{Server: server, Root: r.Path, Verdict: app.Allow, By: app.ByCommandLine}); err != nil {
			return err
		}
	}
	return nil
}

type build struct {
	once sync.Once
	bin  string
	err  error
}

var builds sync.Map // module-relative package path -> *build

// Program builds the test program at pkg (a path from the module root,
// such as "mcp/testdata/hostile") once per test process and returns the
// binary. The binaries live in a folder of the system's temp folder shared
// by the test processes of one checkout; go build's cache keeps rebuilding
// cheap.
func Program(t testing.TB, pkg string) string {
	t.Helper()
	root := ModuleRoot(t)
	v, _ := builds.LoadOrStore(pkg, &build{})
	b := v.(*build)
	b.once.Do(func() {
		sum := sha256.Sum256([]byte(root))
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("rootkeeper-testbin-%x", sum[:6]))
		if b.err = os.MkdirAll(dir, 0o755); b.err != nil {
			return
		}
		b.bin = filepath.Join(dir, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-o", b.bin, "./"+pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatalf("building the test program: %v", b.err)
	}
	return b.bin
}

// RunCore runs core's file watcher (Core.Run) until the test ends, and
// waits for it to end before the test's folders are removed: a reload
// still under way (a file moved aside, read again) would otherwise race
// the removal ("directory not empty").
func RunCore(t testing.TB, core *app.Core) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		core.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// RealTempDir is t.TempDir() with its own symlinks resolved (macOS's /var
// is /private/var), so that the paths a test expects are the ones Rootkeeper
// resolves and reports.
func RealTempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
