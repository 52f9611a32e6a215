//go:build unix

package hosts

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"rootkeeper/app/apptest"
)

// A regular file up to the limit is read whole; one byte more is refused
// by name; a missing file is fs.ErrNotExist.
func TestReadHostFileBoundsItsSize(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	data := bytes.Repeat([]byte("x"), 1000)
	os.WriteFile(path, data, 0o600)
	got, err := readHostFile(path, 1000)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("at the limit: %d bytes, %v", len(got), err)
	}
	_, err = readHostFile(path, 999)
	if why, ok := isRefused(err); !ok || !strings.Contains(why, path) || !strings.Contains(why, "is larger than") {
		t.Fatalf("past the limit: %v", err)
	}
	if _, err := readHostFile(filepath.Join(dir, "none"), 1000); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

// A named pipe is refused at once, its writer never awaited; a folder and
// a link to a device are refused by what they are.
func TestReadHostFileRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero.json")
	os.Symlink("/dev/zero", link)
	for path, want := range map[string]string{
		fifo:        fifo + " is a named pipe (FIFO), not a regular file",
		link:        link + " (a link to /dev/zero) is a character device",
		t.TempDir(): "is a folder",
		"/dev/null": "/dev/null is a character device",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := readHostFile(path, MaxFileBytes)
			done <- err
		}()
		select {
		case err := <-done:
			if why, ok := isRefused(err); !ok || !strings.Contains(why, want) {
				t.Errorf("%s: %v; want refused as %q", path, err, want)
			}
		case <-time.After(apptest.Patience):
			t.Fatalf("%s: still reading after %v (hung?)", path, apptest.Patience)
		}
	}
}

// The check before a replace compares the file piece by piece: the same
// bytes hold, a change anywhere (or in length), a named pipe or a missing
// file does not.
func TestHostFileHolds(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	data := bytes.Repeat([]byte("0123456789"), 30000) // several pieces
	os.WriteFile(path, data, 0o600)
	if !hostFileHolds(path, data) {
		t.Fatal("the same bytes do not hold")
	}
	changed := bytes.Clone(data)
	changed[len(changed)-1] = 'x'
	if hostFileHolds(path, changed) || hostFileHolds(path, data[:len(data)-1]) || hostFileHolds(path, append(bytes.Clone(data), 'x')) {
		t.Fatal("other bytes hold")
	}
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o600)
	if hostFileHolds(fifo, nil) || hostFileHolds(filepath.Join(dir, "none"), nil) {
		t.Fatal("a named pipe or a missing file holds")
	}
}
