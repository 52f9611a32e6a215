package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestServerTempSweepsOrphans: a private temp folder whose state folder
// was deleted is removed, with its owner file, when the next one is made;
// one whose link still leads to it stays, and so do a folder made moments
// ago whose link is not there (yet) and a folder with no owner file.
func TestServerTempSweepsOrphans(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	mk := func(state, name string) string {
		t.Helper()
		p, err := ServerTemp(state, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "scratch"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	age := func(p string) {
		t.Helper()
		old := time.Now().Add(-2 * orphanAge)
		if err := os.Chtimes(p+ownerSuffix, old, old); err != nil {
			t.Fatal(err)
		}
	}
	gone, kept, fresh := t.TempDir(), t.TempDir(), t.TempDir()
	orphan, live, young := mk(gone, "fs"), mk(kept, "fs"), mk(fresh, "fs")
	base := filepath.Dir(orphan)
	unowned := filepath.Join(base, "0123456789abcdef01234567")
	if err := os.Mkdir(unowned, 0o700); err != nil {
		t.Fatal(err)
	}
	age(orphan)
	age(live)
	for _, state := range []string{gone, fresh} {
		if err := os.RemoveAll(state); err != nil {
			t.Fatal(err)
		}
	}

	made := mk(t.TempDir(), "memory")

	for _, p := range []string{orphan, orphan + ownerSuffix} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was not swept (its state folder is gone)", p)
		}
	}
	for _, p := range []string{live, live + ownerSuffix, young, young + ownerSuffix, unowned, made, made + ownerSuffix} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was swept: %v", p, err)
		}
	}
}

// TestRemoveServerTempTakesItsOwnerFile: removing a server leaves nothing
// of its private temp folder in the rootkeeper-UID folder.
func TestRemoveServerTempTakesItsOwnerFile(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	state := t.TempDir()
	p, err := ServerTemp(state, "fs")
	if err != nil {
		t.Fatal(err)
	}
	if err := RemoveServerTemp(state, "fs"); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("%s is left", e.Name())
	}
}
