package confine

// Answering a call the filter sent (struct seccomp_notif) through
// SECCOMP_IOCTL_NOTIF_SEND: failing it or making it succeed (answer,
// answerValue, answerMeta), or letting it go on to Landlock (cont); asking
// whether it still waits (stillWaiting); and reading a path from the
// caller's memory (readString).

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompNotif is struct seccomp_notif.
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

// seccompNotifResp is struct seccomp_notif_resp.
type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// seccompNotifAddfd is struct seccomp_notif_addfd.
type seccompNotifAddfd struct {
	id         uint64
	flags      uint32
	srcfd      uint32
	newfd      uint32
	newfdFlags uint32
}

// ioctl is ioctl(2) on fd with a pointer argument.
func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

// quickIoctl is ioctl(2) on the listener fd made without telling the
// Go scheduler (RawSyscall), for the requests that never wait: SEND and
// ID_VALID, and RECV once poll said a call is there. Each system call
// made through the scheduler is an exit from and a return to it, and one
// made while every P was idle wakes the runtime's monitor thread; a
// server's start makes 300-2,700 observed calls, each of them three or
// four such calls (BenchmarkSpacedOpens1000: Rootkeeper's CPU an open
// 29-31 µs through the scheduler, 21-22 raw, with readMem raw too).
// ADDFD waits for the server's thread to take the descriptor and goes
// through ioctl.
func quickIoctl(fd int, req uint, arg unsafe.Pointer) error {
	_, _, e := unix.RawSyscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

// answer fails call id with e, or makes it succeed (e == 0).
func (o *Observer) answer(fd int, id uint64, e unix.Errno) {
	r := seccompNotifResp{id: id, error: -int32(e)}
	quickIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
}

// answerValue makes call id succeed with v as its result.
func (o *Observer) answerValue(fd int, id uint64, v int64) {
	r := seccompNotifResp{id: id, val: v}
	quickIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
}

// answerMeta answers a metadata call with what doing it (or refusing it)
// gave.
func (o *Observer) answerMeta(fd int, n *seccompNotif, shape metaShape) {
	o.answer(fd, n.id, o.meta(fd, n, shape))
}

// cont lets the call go on as if it had not been seen: Landlock decides.
func (o *Observer) cont(fd int, id uint64) {
	r := seccompNotifResp{id: id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	quickIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
}

// stillWaiting reports whether call id still waits: what was read from
// its memory and opened is its own only then.
func (o *Observer) stillWaiting(fd int, id uint64) bool {
	return quickIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) == nil
}

// readString reads a NUL-terminated path from the server's memory.
func readString(pid int, addr uintptr) (string, error) {
	var out []byte
	buf := make([]byte, 256)
	for len(out) < unix.PathMax {
		// Up to the page's end first: the next page may not be mapped.
		n := min(uintptr(len(buf)), 4096-addr%4096)
		if err := readMem(pid, addr, buf[:n]); err != nil {
			return "", err
		}
		if i := indexByte(buf[:n], 0); i >= 0 {
			return string(append(out, buf[:i]...)), nil
		}
		out = append(out, buf[:n]...)
		addr += n
	}
	return "", unix.ENAMETOOLONG
}

// indexByte is the index of the first c in b, or -1.
func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// readMem fills buf from the memory of process pid at addr
// (process_vm_readv); a read of less is EFAULT.
//
// It is made raw, as quickIoctl. A raw call holds its P, and delays the
// garbage collector's stops, for as long as it takes; this one takes long
// only if the server's memory at addr must be paged in from a slow file
// system (a file it mapped from a folder on NFS), which a confined server
// cannot make wait for ever: userfaultfd is refused (syscalls.go), and it
// can neither mount nor serve a FUSE file system.
func readMem(pid int, addr uintptr, buf []byte) error {
	local := unix.Iovec{Base: &buf[0]}
	local.SetLen(len(buf))
	remote := unix.RemoteIovec{Base: addr, Len: len(buf)}
	n, _, e := unix.RawSyscall6(unix.SYS_PROCESS_VM_READV, uintptr(pid), uintptr(unsafe.Pointer(&local)), 1, uintptr(unsafe.Pointer(&remote)), 1, 0)
	if e != 0 {
		return e
	}
	if int(n) != len(buf) {
		return unix.EFAULT
	}
	return nil
}
