//go:build unix

package detect

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"rootkeeper/app/apptest"
)

// TestUnreadable scans a tree with a chmod 000 folder and a folder that can
// be listed but not entered. Root reads such folders anyway, so as root the
// test runs as nobody (apptest.AsNobody).
func TestUnreadable(t *testing.T) {
	if !apptest.AsNobody(t) {
		return
	}
	root := filepath.Join(t.TempDir(), "root")
	write(t, filepath.Join(root, "ok", "go.mod"), "")
	write(t, filepath.Join(root, "locked", "go.mod"), "")
	write(t, filepath.Join(root, "locked", "inner", "go.mod"), "")
	write(t, filepath.Join(root, "noexec", "sub", "go.mod"), "")
	write(t, filepath.Join(root, "z", "late", "go.mod"), "")
	if err := os.Chmod(filepath.Join(root, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "noexec"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Chmod(filepath.Join(root, "locked"), 0o755)
		os.Chmod(filepath.Join(root, "noexec"), 0o755)
	})

	got, sum := scanAll(t, &Scanner{}, Request{Dirs: []string{root}})
	if want := []string{filepath.Join(root, "ok"), filepath.Join(root, "z", "late")}; !slices.Equal(paths(got), want) {
		t.Errorf("found %q, want %q", paths(got), want)
	}
	if want := []string{filepath.Join(root, "locked"), filepath.Join(root, "noexec", "sub")}; !slices.Equal(sum.Unreadable, want) {
		t.Errorf("unreadable %q, want %q", sum.Unreadable, want)
	}
	_, err := new(Scanner).Scan(context.Background(), Request{Dirs: []string{filepath.Join(root, "locked")}}, nil, nil)
	var re *RootError
	if want := `search folder "` + filepath.Join(root, "locked") + `" cannot be read: permission denied`; !errors.As(err, &re) || err.Error() != want {
		t.Errorf("scanning the locked folder itself: %v, want a RootError %q", err, want)
	}
}
