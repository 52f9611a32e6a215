package app

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// RemoveServerFiles removes a server's temp folder and link, data folder
// and log generations; another server's files with similar names, the
// target of a planted link, and the state folder itself (for a server
// named "..") stay.
func TestRemoveServerFiles(t *testing.T) {
	state := t.TempDir()
	temp, err := ServerTemp(state, "fs")
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "precious"), []byte("x"), 0o600)
	os.MkdirAll(filepath.Join(state, "data", "fs", "sub"), 0o700)
	os.MkdirAll(filepath.Join(state, "data"), 0o700)
	os.Symlink(outside, filepath.Join(state, "data", "fs", "sub", "link"))
	os.MkdirAll(filepath.Join(state, "logs"), 0o700)
	for _, f := range []string{"fs.log", "fs.log.1", "fs.log.3", "fs2.log", "fs.log.1.log", "fs.log.x", "...log"} {
		os.WriteFile(filepath.Join(state, "logs", f), nil, 0o600)
	}
	if err := RemoveServerFiles(state, "fs"); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{temp, filepath.Join(state, "tmp", "server-fs"), filepath.Join(state, "data", "fs")} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("%s is still there", gone)
		}
	}
	var logs []string
	entries, _ := os.ReadDir(filepath.Join(state, "logs"))
	for _, e := range entries {
		logs = append(logs, e.Name())
	}
	if want := []string{"...log", "fs.log.1.log", "fs.log.x", "fs2.log"}; !slices.Equal(logs, want) {
		t.Errorf("logs left %q, want %q", logs, want)
	}
	if _, err := os.Stat(filepath.Join(outside, "precious")); err != nil {
		t.Errorf("a link's target went: %v", err)
	}
	// A server named ".." has no data folder: the state folder stays.
	os.MkdirAll(filepath.Join(state, "data", "keep"), 0o700)
	if err := RemoveServerFiles(state, ".."); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(state, "data", "keep")); err != nil {
		t.Errorf(`removing server ".." took the data folder: %v`, err)
	}
	if _, err := os.Stat(filepath.Join(state, "logs", "...log")); err == nil {
		t.Errorf(`server ".."'s own log is left`)
	}
	// Nothing there: no error.
	if err := RemoveServerFiles(state, "none"); err != nil {
		t.Errorf("nothing to remove: %v", err)
	}
}
