//go:build linux && (amd64 || arm64)

package filecall

import (
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Sync is fsync(2) of fd, or fdatasync(2) when dataOnly, made by the
// kernel (Linux AIO) while this goroutine waits in the network poller (see
// the package's doc); the ordinary call where AIO is refused.
func Sync(fd int, dataOnly bool) error {
	op := uint16(iocbCmdFsync)
	if dataOnly {
		op = iocbCmdFdsync
	}
	if err := kernelSync(fd, op); err != errNoAIO {
		return err
	}
	if dataOnly {
		return ordinary(func() error { return syscall.Fdatasync(fd) })
	}
	return ordinary(func() error { return syscall.Fsync(fd) })
}

// The AIO commands and flag used here (linux/aio_abi.h).
const (
	iocbCmdFsync  = 2
	iocbCmdFdsync = 3
	iocbFlagResfd = 1 // signal the eventfd in resfd when done
)

// iocb is linux/aio_abi.h's struct iocb on a little-endian machine (key
// then rw_flags; both stay zero here).
type iocb struct {
	data      uint64
	key       uint32
	rwFlags   int32
	opcode    uint16
	reqprio   int16
	fildes    uint32
	buf       uint64
	nbytes    uint64
	offset    int64
	reserved2 uint64
	flags     uint32
	resfd     uint32
}

// ioEvent is linux/aio_abi.h's struct io_event.
type ioEvent struct {
	data, obj uint64
	res, res2 int64
}

// errNoAIO says that AIO cannot make this sync: make it the ordinary way.
var errNoAIO = syscall.ENOSYS

// aio is the process's one AIO context and the eventfd it signals, set up
// at the first sync; one sync is handed over at a time (mu), so each
// signal of done answers the sync under way.
var aio struct {
	setup sync.Once
	mu    sync.Mutex
	ok    bool
	ctx   uintptr         // aio_context_t
	efd   int             // the eventfd, non-blocking
	done  syscall.RawConn // efd in the network poller
	keep  *os.File        // keeps efd open and in the poller
	// What the kernel reads and writes, here rather than on a stack
	// that may move: the request, the list of one request io_submit
	// takes, the answer, and a zero timeout (io_getevents never waits).
	cb    iocb
	cbs   [1]*iocb
	event ioEvent
	zero  unix.Timespec
}

// setUpAIO makes the context and the eventfd; ok stays false when either
// is refused.
func setUpAIO() {
	if _, _, e := syscall.RawSyscall(unix.SYS_IO_SETUP, 1, uintptr(unsafe.Pointer(&aio.ctx)), 0); e != 0 {
		return
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(efd), "aio-done")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return
	}
	aio.efd, aio.done, aio.keep, aio.ok = efd, rc, f, true
}

// kernelSync hands the sync op of fd to the kernel and waits for its
// result; errNoAIO when the kernel would not take it.
func kernelSync(fd int, op uint16) error {
	aio.setup.Do(setUpAIO)
	if !aio.ok {
		return errNoAIO
	}
	aio.mu.Lock()
	defer aio.mu.Unlock()
	aio.cb = iocb{opcode: op, fildes: uint32(fd), flags: iocbFlagResfd, resfd: uint32(aio.efd)}
	aio.cbs[0] = &aio.cb
	if _, err := rawInts(unix.SYS_IO_SUBMIT, aio.ctx, 1, uintptr(unsafe.Pointer(&aio.cbs))); err != nil {
		if err == syscall.EBADF {
			return err
		}
		// EINVAL: a kernel before 4.18, or a file whose file system
		// syncs no other way; EAGAIN: no room. The ordinary call
		// says which, or does it.
		return errNoAIO
	}
	for {
		if err := waitDone(); err != nil {
			return err // the poller failed: the sync's result is unknown
		}
		n, _, _ := syscall.RawSyscall6(unix.SYS_IO_GETEVENTS, aio.ctx, 1, 1, uintptr(unsafe.Pointer(&aio.event)), uintptr(unsafe.Pointer(&aio.zero)), 0)
		if n == 1 {
			break
		}
	}
	if aio.event.res < 0 {
		return syscall.Errno(-aio.event.res)
	}
	return nil
}

// waitDone waits in the poller until the eventfd has been signalled, and
// reads (clears) it.
func waitDone() error {
	var count [8]byte
	return aio.done.Read(func(efd uintptr) bool {
		_, _, e := syscall.RawSyscall(unix.SYS_READ, efd, uintptr(unsafe.Pointer(&count[0])), 8)
		return e != syscall.EAGAIN
	})
}
