//go:build linux && (amd64 || arm64)

package filecall

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Raw calls are for local file systems only: a tmpfs is one, /proc (like
// NFS or FUSE, which cannot be mounted here) is not on the list, and a
// folder that cannot be asked gets ordinary calls.
func TestRawOnlyOnLocalFileSystems(t *testing.T) {
	for dir, want := range map[string]bool{
		"/dev/shm":                         true,
		"/proc":                            false,
		filepath.Join(t.TempDir(), "gone"): false,
	} {
		if got := In(dir).Raw(); got != want {
			t.Errorf("In(%s).Raw() = %v, want %v", dir, got, want)
		}
	}
	if For("/proc/self/status").Raw() {
		t.Error("For a file in /proc: raw calls")
	}
	// A folder not made yet is asked again once it is.
	later := filepath.Join(t.TempDir(), "later")
	if In(later).Raw() {
		t.Errorf("In(%s): raw calls before the folder exists", later)
	}
	if err := os.Mkdir(later, 0o700); err != nil {
		t.Fatal(err)
	}
	if want := In(filepath.Dir(later)).Raw(); In(later).Raw() != want {
		t.Errorf("In(%s) once made: raw %v, want %v as its parent", later, !want, want)
	}
}

// The raw calls and the ordinary ones do the same, errors included.
func TestRawAndOrdinaryCallsAgree(t *testing.T) {
	for _, raw := range []bool{false, true} {
		t.Run(fmt.Sprintf("raw=%v", raw), func(t *testing.T) {
			c, dir := Calls{raw: raw}, t.TempDir()
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			if _, err := c.Open(a, syscall.O_RDONLY, 0); err != syscall.ENOENT {
				t.Errorf("open of a missing file: %v, want ENOENT", err)
			}
			fd, err := c.Open(a, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := c.Pwrite(fd, []byte("hello, world"), 0); n != 12 || err != nil {
				t.Errorf("pwrite: %d, %v", n, err)
			}
			if n, err := c.Write(fd, []byte("!")); n != 1 || err != nil {
				t.Errorf("write: %d, %v", n, err)
			}
			var named syscall.Stat_t
			if err := c.Stat(a, &named); err != nil || named.Size != 12 {
				t.Errorf("stat: size %d, %v; want 12 (pwrite moves no offset: the write was at 0)", named.Size, err)
			}
			if err := c.Stat(filepath.Join(dir, "missing"), &named); err != syscall.ENOENT {
				t.Errorf("stat of a missing file: %v, want ENOENT", err)
			}
			if err := c.Ftruncate(fd, 5); err != nil {
				t.Error(err)
			}
			if err := c.Fchmod(fd, 0o640); err != nil {
				t.Error(err)
			}
			var st syscall.Stat_t
			if err := c.Fstat(fd, &st); err != nil || st.Size != 5 || st.Mode&0o777 != 0o640 {
				t.Errorf("fstat: size %d mode %o, %v; want 5, 640", st.Size, st.Mode&0o777, err)
			}
			if err := c.Lease(fd, unix.F_WRLCK); err != nil {
				t.Errorf("a write lease on a file open once: %v", err)
			}
			c.Lease(fd, unix.F_UNLCK)
			if err := Sync(fd, true); err != nil {
				t.Errorf("fdatasync: %v", err)
			}
			if err := c.Close(fd); err != nil {
				t.Error(err)
			}
			if err := c.Close(fd); err != syscall.EBADF {
				t.Errorf("closing twice: %v, want EBADF", err)
			}
			if err := os.WriteFile(b, []byte("other"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := c.Exchange(a, b); err != nil {
				t.Fatal(err)
			}
			if got := read(t, c, a); got != "other" {
				t.Errorf("a after the exchange holds %q, want other", got)
			}
			if got := read(t, c, b); got != "!ello" {
				t.Errorf("b after the exchange holds %q, want !ello", got)
			}
			if err := c.Rename(b, a); err != nil {
				t.Fatal(err)
			}
			if got := names(t, c, dir); !slices.Equal(got, []string{"a"}) {
				t.Errorf("the folder holds %q, want [a]", got)
			}
			if err := c.Unlink(a); err != nil {
				t.Error(err)
			}
			if err := c.Unlink(a); err != syscall.ENOENT {
				t.Errorf("unlinking twice: %v, want ENOENT", err)
			}
			if err := c.Exchange(a, b); err != syscall.ENOENT {
				t.Errorf("exchanging a missing file: %v, want ENOENT", err)
			}
		})
	}
}

func read(t *testing.T, c Calls, path string) string {
	t.Helper()
	fd, err := c.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(fd)
	buf := make([]byte, 64)
	n, err := c.Read(fd, buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

func names(t *testing.T, c Calls, dir string) []string {
	t.Helper()
	fd, err := c.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(fd)
	buf := make([]byte, 4096)
	var all []string
	for {
		n, err := c.Getdents(fd, buf)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			slices.Sort(all)
			return all
		}
		_, _, all = syscall.ParseDirent(buf[:n], -1, all)
	}
}

// Syncs are made by the kernel (AIO) here, and their errors come back:
// a closed descriptor's at once, a pipe's (which cannot be synced) from
// the kernel's answer or the ordinary call. Many at once, from many
// goroutines, each get their own answer.
func TestSyncThroughTheKernel(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	fd := int(f.Fd())
	for _, dataOnly := range []bool{true, false} {
		if err := Sync(fd, dataOnly); err != nil {
			t.Errorf("Sync(dataOnly %v): %v", dataOnly, err)
		}
	}
	if err := kernelSync(fd, iocbCmdFdsync); err != nil {
		t.Fatalf("the kernel would not make the sync (AIO, Linux 4.18 or later): %v", err)
	}
	f.Close()
	if err := Sync(fd, false); err != syscall.EBADF {
		t.Errorf("Sync of a closed descriptor: %v, want EBADF", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if err := Sync(int(r.Fd()), true); err != syscall.EINVAL {
		t.Errorf("Sync of a pipe: %v, want EINVAL", err)
	}

	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 8*40)
	for g := range 8 {
		wg.Go(func() {
			f, err := os.Create(filepath.Join(dir, strconv.Itoa(g)))
			if err != nil {
				errs <- err
				return
			}
			defer f.Close()
			for i := range 40 {
				f.WriteAt([]byte(strconv.Itoa(i)), 0)
				errs <- Sync(int(f.Fd()), i%2 == 0)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
