//go:build unix

package osfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO with no writer would block open(2) forever; OpenNoWait returns it
// at once, for the caller to refuse by its type.
func TestOpenNoWaitFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenNoWait(fifo)
	if err != nil {
		t.Fatalf("OpenNoWait(fifo): %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("opened %v, want a named pipe", fi.Mode())
	}
}

func TestOpenNoWaitReadsAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenNoWait(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 16)
	n, err := f.Read(buf)
	if err != nil || string(buf[:n]) != "hello" {
		t.Errorf("read %q, %v; want hello", buf[:n], err)
	}
}

func TestOwnerDeviceAndWritable(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fa, fb := stat(t, a), stat(t, b)
	if uid, ok := OwnerOf(fa); !ok || uid != os.Geteuid() {
		t.Errorf("OwnerOf = %d, %v; want %d, true", uid, ok, os.Geteuid())
	}
	da, oka := DeviceOf(fa)
	db, okb := DeviceOf(fb)
	if !oka || !okb || da != db {
		t.Errorf("DeviceOf two files in one folder = %d, %v and %d, %v; want the same device", da, oka, db, okb)
	}
	if WritableByOthers(fa) {
		t.Error("a 0600 file is writable by others")
	}
	if err := os.Chmod(a, 0o620); err != nil {
		t.Fatal(err)
	}
	if !WritableByOthers(stat(t, a)) {
		t.Error("a group-writable file is not writable by others")
	}
}

// While WithLock holds the lock exclusively, nobody else can take it; once
// fn returns, the lock is free again.
func TestWithLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	tryLock := func() error {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	}
	ran := false
	err := WithLock(path, true, func() error {
		ran = true
		if err := tryLock(); !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Errorf("a shared lock taken during the exclusive one: %v", err)
		}
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("WithLock: %v (fn ran: %v)", err, ran)
	}
	if err := tryLock(); err != nil {
		t.Errorf("the lock is still held after fn returned: %v", err)
	}
	want := errors.New("fn failed")
	if err := WithLock(path, false, func() error { return want }); err != want {
		t.Errorf("WithLock returned %v, want fn's error", err)
	}
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// ReadFile reads what os.ReadFile reads and fails as it does; ReadFileInto
// reads into the buffer it is given when it has room.
func TestReadFileAsOSReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, size := range []int{0, 1, 511, 512, 513, 70000} {
		want := make([]byte, size)
		for i := range want {
			want[i] = byte('a' + i%26)
		}
		if err := os.WriteFile(path, want, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(path)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%d bytes: read %d, %v", size, len(got), err)
		}
		buf := make([]byte, 3, 80000)
		got, err = ReadFileInto(path, buf)
		if err != nil || string(got) != string(want) || &got[:1][0] != &buf[:1][0] {
			t.Fatalf("%d bytes into a buffer: read %d, %v (into the buffer: %v)", size, len(got), err, &got[:1][0] == &buf[:1][0])
		}
		if got, err = ReadFileInto(path, make([]byte, 0, 4)); err != nil || string(got) != string(want) {
			t.Fatalf("%d bytes into a small buffer: read %d, %v", size, len(got), err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want not exist", err)
	}
	if _, err := ReadFile(dir); err == nil {
		t.Error("a folder was read as a file")
	}
	names, err := Names(dir)
	if err != nil || len(names) != 1 || names[0] != "f" {
		t.Errorf("Names: %q, %v", names, err)
	}
	if _, err := Names(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Names of a missing folder: %v", err)
	}
}

// A FIFO where the state file was is refused at once, not waited for in
// open(2) (which, made raw, would hold a P until a writer came).
func TestReadFileOfAFIFODoesNotWait(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "state.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan []byte)
	go func() {
		data, _ := ReadFile(fifo)
		done <- data
	}()
	select {
	case data := <-done:
		if len(data) != 0 {
			t.Errorf("read %q from a FIFO with no writer", data)
		}
	case <-time.After(10 * time.Second): // a guard against a hang, not a measure
		t.Fatal("ReadFile of a FIFO with no writer is still waiting in open(2)")
	}
}
