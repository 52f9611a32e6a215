package atomicfile

import (
	"syscall"
	_ "unsafe" // go:linkname
)

// The syncs are the one system call of a save that waits for the disk:
// a millisecond, often ten under load. Made the ordinary way, the
// goroutine's P stays with it in the system call, and the runtime hands it
// to another thread only when it has other work or has waited 10 ms; until
// then the runtime's monitor thread (sysmon), which may only sleep long
// while every P is idle, wakes every 20 µs, then every 40, 80, ...: some
// fifty times a save (BenchmarkGrantToServer's sysmon-wakes: 36 -> 27 a
// grant at fifty servers). entersyscallblock is the runtime's own way into
// a system call known to block: the P is handed over at once, as when the
// runtime waits on a note itself (notetsleepg). The runtime keeps it
// reachable by go:linkname and its signature unchanged for the programs
// that use it (go.dev/issue/67401).

//go:linkname entersyscallblock runtime.entersyscallblock
func entersyscallblock()

//go:linkname exitsyscall runtime.exitsyscall
func exitsyscall()

// syncFD makes fd's data and size durable (fdatasync), or all of it
// (fsync) unless dataOnly, again when a signal interrupted it.
func syncFD(fd int, dataOnly bool) error {
	trap := uintptr(syscall.SYS_FSYNC)
	if dataOnly {
		trap = syscall.SYS_FDATASYNC
	}
	for {
		switch _, e := blockingSyscall(trap, uintptr(fd), 0, 0); e {
		case 0:
			return nil
		case syscall.EINTR:
		default:
			return e
		}
	}
}

// blockingSyscall is the system call trap(a1, a2, a3), made as one the
// scheduler knows will block. Between entersyscallblock and exitsyscall
// nothing may grow the stack or need a P: the call is raw (assembly), the
// function neither split-checked nor instrumented for the race detector.
//
//go:nosplit
//go:norace
func blockingSyscall(trap, a1, a2, a3 uintptr) (uintptr, syscall.Errno) {
	entersyscallblock()
	r, _, e := syscall.RawSyscall(trap, a1, a2, a3)
	exitsyscall()
	return r, e
}
