package atomicfile

import (
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// A system call made by blockingSyscall lets go of its P: with one P, a
// read of an empty pipe made that way lets the goroutine that writes to
// the pipe run (made raw, holding the P, it would wait forever).
func TestBlockingSyscallLetsOthersRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])
	read := make(chan byte, 1)
	go func() {
		var b [1]byte
		n, e := blockingSyscall(syscall.SYS_READ, uintptr(p[0]), uintptr(unsafe.Pointer(&b[0])), 1)
		if n != 1 || e != 0 {
			t.Errorf("read %d, %v", n, e)
		}
		read <- b[0]
	}()
	runtime.Gosched() // the reader runs first and blocks
	if _, err := syscall.Write(p[1], []byte{'x'}); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-read:
		if b != 'x' {
			t.Fatalf("read %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader never returned")
	}
}
