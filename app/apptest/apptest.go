// Package apptest is what the tests of several packages share: a Core on a
// fresh state folder, and the real MCP servers that .ci/setup installs from
// npm. It is imported by tests only.
package apptest

import (
	"os"
	"path/filepath"
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
