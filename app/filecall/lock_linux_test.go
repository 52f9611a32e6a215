//go:build linux && (amd64 || arm64)

package filecall_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"rootkeeper/app/apptest"
	"rootkeeper/app/filecall"
)

// A lock that another open of the file holds is waited for (through the
// scheduler, in flock(2) itself), not refused, and taken once it is given
// back; a lock asked not to wait (LOCK_NB) is refused.
func TestFlockWaitsForAnotherHolder(t *testing.T) {
	c := filecall.In(t.TempDir())
	if !c.Raw() {
		t.Fatal("the test's temp folder is not on a local file system")
	}
	path := filepath.Join(t.TempDir(), "lock")
	holder, err := c.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(holder)
	if err := c.Flock(holder, syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	waiter, err := c.Open(path, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(waiter)
	if err := c.Flock(waiter, syscall.LOCK_EX|syscall.LOCK_NB); err != syscall.EWOULDBLOCK {
		t.Errorf("LOCK_NB on a held lock: %v, want EWOULDBLOCK", err)
	}
	tid := make(chan int)
	var given atomic.Bool // the holder has given the lock back
	got := make(chan error)
	go func() {
		runtime.LockOSThread()
		tid <- unix.Gettid()
		err := c.Flock(waiter, syscall.LOCK_EX)
		if err == nil && !given.Load() {
			err = errors.New("took the lock while another held it")
		}
		got <- err
	}()
	// Wait until the waiter's thread is in flock(2) (what the kernel says
	// it is doing: no event tells), then give the lock back.
	waitingIn := fmt.Sprintf("/proc/self/task/%d/syscall", <-tid)
	apptest.Eventually(t, "the waiter waiting in flock(2)", func() (bool, string) {
		b, _ := os.ReadFile(waitingIn)
		return strings.HasPrefix(string(b), strconv.Itoa(unix.SYS_FLOCK)+" "), string(b)
	})
	given.Store(true)
	if err := c.Flock(holder, syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Error(err)
	}
}
