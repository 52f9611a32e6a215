package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// inode is the inode number of path.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// With a spare, writes swap the file and the spare: after the first (the
// spare becomes the file) the same two inodes take turns, none made or
// freed, and each write's bytes are exactly what the file holds, longer or
// shorter than the spare's.
func TestSpareTakesTurnsWithTheFile(t *testing.T) {
	dir := t.TempDir()
	path, spare := filepath.Join(dir, "state.json"), filepath.Join(dir, "state.json.spare")
	o := Options{Perm: 0o600, Spare: "state.json.spare"}
	if err := Write(path, []byte("first, long enough"), o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(spare); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after the first write the spare is there (%v): it should have become the file", err)
	}
	first := inode(t, path)
	if err := Write(path, []byte("second"), o); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, path); got != "second" {
		t.Fatalf("file holds %q, want %q", got, "second")
	}
	if got := mustRead(t, spare); got != "first, long enough" {
		t.Fatalf("spare holds %q, want the file's previous bytes", got)
	}
	second := inode(t, path)
	if second == first || inode(t, spare) != first {
		t.Fatalf("inodes: file %d (was %d), spare %d: the two did not swap", second, first, inode(t, spare))
	}
	for i, want := range []string{"third, longer than the second", "4th"} {
		if err := Write(path, []byte(want), o); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, path); got != want {
			t.Fatalf("file holds %q, want %q", got, want)
		}
		wantIno := []uint64{first, second}[i]
		if got := inode(t, path); got != wantIno {
			t.Fatalf("write %d: the file is inode %d, want %d (a new file was made)", i+3, got, wantIno)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}

// A reader that opened the file before a write and reads it after the
// write after next (one that takes no lock) still reads the bytes it
// opened: the spare it holds is made anew rather than written over. Once
// nobody holds it, the spare is written over again (no inode made).
func TestSpareHeldByAReaderIsNotWrittenOver(t *testing.T) {
	dir := t.TempDir()
	path, spare := filepath.Join(dir, "state.json"), filepath.Join(dir, "state.json.spare")
	o := Options{Perm: 0o600, Spare: "state.json.spare"}
	for _, data := range []string{"one", "two"} {
		if err := Write(path, []byte(data), o); err != nil {
			t.Fatal(err)
		}
	}
	reader, err := os.Open(path) // "two"
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	held := inode(t, path)
	for _, data := range []string{"three", "four, longer than the others"} {
		if err := Write(path, []byte(data), o); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, path); got != data {
			t.Fatalf("file holds %q, want %q", got, data)
		}
	}
	buf := make([]byte, 64)
	n, err := reader.ReadAt(buf, 0)
	if got := string(buf[:n]); got != "two" {
		t.Fatalf("the reader opened %q and reads %q (%v): its file was written over", "two", got, err)
	}
	if inode(t, path) == held || inode(t, spare) == held {
		t.Fatalf("the held file (inode %d) is still the file's or the spare's", held)
	}
	reader.Close()
	before := inode(t, spare)
	if err := Write(path, []byte("five"), o); err != nil {
		t.Fatal(err)
	}
	if got := inode(t, path); got != before {
		t.Fatalf("with nobody holding it the spare (inode %d) was not used: the file is inode %d", before, got)
	}
}

// A spare that is a link to another file, or a second name of one, is not
// written through: that file keeps its bytes and the write succeeds with a
// spare of its own.
func TestSpareNeverWritesThroughALinkOrASecondName(t *testing.T) {
	for _, how := range []string{"symlink", "hard link"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			path, spare := filepath.Join(dir, "state.json"), filepath.Join(dir, "state.json.spare")
			other := filepath.Join(t.TempDir(), "other")
			if err := os.WriteFile(other, []byte("not yours to write"), 0o600); err != nil {
				t.Fatal(err)
			}
			link := os.Symlink
			if how == "hard link" {
				link = os.Link
			}
			if err := link(other, spare); err != nil {
				t.Fatal(err)
			}
			o := Options{Perm: 0o600, Spare: "state.json.spare"}
			for _, data := range []string{"one", "two"} {
				if err := Write(path, []byte(data), o); err != nil {
					t.Fatal(err)
				}
				if got := mustRead(t, path); got != data {
					t.Fatalf("file holds %q, want %q", got, data)
				}
			}
			if got := mustRead(t, other); got != "not yours to write" {
				t.Fatalf("the linked file was written: %q", got)
			}
		})
	}
}

// A write refused before the swap, or made impossible, leaves the file as
// it was and no spare; the mode asked for is the file's.
func TestSpareRefusedOrFailedLeavesTheFile(t *testing.T) {
	dir := t.TempDir()
	path, spare := filepath.Join(dir, "state.json"), filepath.Join(dir, "state.json.spare")
	o := Options{Perm: 0o640, Spare: "state.json.spare"}
	for _, data := range []string{"old", "older"} {
		if err := Write(path, []byte(data), o); err != nil {
			t.Fatal(err)
		}
	}
	refused := errors.New("changed meanwhile")
	o.BeforeRename = func() error { return refused }
	if err := Write(path, []byte("new"), o); !errors.Is(err, refused) {
		t.Fatalf("Write: %v, want the refusal", err)
	}
	if got := mustRead(t, path); got != "older" {
		t.Fatalf("after a refused write: %q", got)
	}
	if _, err := os.Lstat(spare); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused write left the spare (%v)", err)
	}
	// The spare taken away before the swap: the write fails.
	o.BeforeRename = func() error { return os.Remove(spare) }
	if err := Write(path, []byte("new"), o); err == nil {
		t.Fatal("a write whose spare was taken away succeeded")
	}
	if got := mustRead(t, path); got != "older" {
		t.Fatalf("after a failed write: %q", got)
	}
	o.BeforeRename = nil
	if err := Write(path, []byte("new"), o); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); mustRead(t, path) != "new" || fi.Mode().Perm() != 0o640 {
		t.Errorf("after a write: %q, mode %v", mustRead(t, path), fi.Mode().Perm())
	}
}

// BenchmarkWrite writes a 32 KiB file (a state of fifty servers' size)
// through a new temp file each time and through a spare, alternating, and
// reports the CPU time each write cost this process (cpu-µs-temp,
// cpu-µs-spare) and their ratio: on ext4, making an inode and freeing
// another each write cost more than the writes and syncs together.
func BenchmarkWrite(b *testing.B) {
	dir := b.TempDir()
	data := make([]byte, 32<<10)
	for i := range data {
		data[i] = 'x'
	}
	temp, spare := Options{Perm: 0o600}, Options{Perm: 0o600, Spare: "b.spare"}
	cpu := func() int64 {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	var inTemp, inSpare int64
	b.ResetTimer()
	for i := range b.N {
		data[0] = byte('a' + i%26)
		began := cpu()
		if err := Write(filepath.Join(dir, "a"), data, temp); err != nil {
			b.Fatal(err)
		}
		mid := cpu()
		if err := Write(filepath.Join(dir, "b"), data, spare); err != nil {
			b.Fatal(err)
		}
		inTemp += mid - began
		inSpare += cpu() - mid
	}
	b.ReportMetric(float64(inTemp)/1e3/float64(b.N), "cpu-µs-temp")
	b.ReportMetric(float64(inSpare)/1e3/float64(b.N), "cpu-µs-spare")
	b.ReportMetric(float64(inSpare)/float64(inTemp), "ratio")
	b.ReportMetric(0, "ns/op")
}
