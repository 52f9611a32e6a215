package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWholeOrNotAtAll(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Refused right before the rename: the old bytes stay, no temp file.
	refused := errors.New("changed meanwhile")
	if err := Write(path, []byte("new"), Options{BeforeRename: func() error { return refused }}); !errors.Is(err, refused) {
		t.Fatalf("Write: %v, want the refusal", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Errorf("after a refused write: %q", data)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a temp file was left: %v", entries)
	}
	// Written: the new bytes with the mode asked for.
	if err := Write(path, []byte("new"), Options{Perm: 0o640, TempPrefix: "state.json.tmp-"}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if data, _ := os.ReadFile(path); string(data) != "new" || fi.Mode().Perm() != 0o640 {
		t.Errorf("after a write: %q, mode %v", data, fi.Mode().Perm())
	}
	// A folder that does not exist: an error, nothing written.
	if err := Write(filepath.Join(dir, "no", "x"), []byte("x"), Options{}); err == nil {
		t.Error("a write into a missing folder succeeded")
	}
}
