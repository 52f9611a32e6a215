package confine

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// unixSocketABI is the first Landlock ABI that confines connecting to
// named unix sockets (LANDLOCK_ACCESS_FS_RESOLVE_UNIX). Below it a
// Landlocked server can still connect to any named unix socket it can
// name: the app's control socket, the D-Bus session bus, an SSH or GPG
// agent in /tmp. There the confining child also installs noUnixSockets.
const unixSocketABI = 9 // app.UnixSocketABI

// nativeArch is the AUDIT_ARCH_* value of the only system call ABI a
// confined server may use; 0 where this package has no filter for the
// architecture (the server is then not started: see sealUnixSockets).
var nativeArch = map[string]uint32{
	"amd64": unix.AUDIT_ARCH_X86_64,
	"arm64": unix.AUDIT_ARCH_AARCH64,
}[runtime.GOARCH]

// x32Bit marks an x32 system call on x86-64 (same AUDIT_ARCH_X86_64).
const x32Bit = 0x40000000

// seccomp_data offsets (linux/seccomp.h): nr, arch, then the six
// arguments as 64-bit values; the low half of an argument is at its
// offset on a little-endian machine, which both architectures above are.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
)

func bpfStmt(code uint16, k uint32) unix.SockFilter {
	return unix.SockFilter{Code: code, K: k}
}

func bpfJump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// noUnixSockets is the seccomp filter that takes unix sockets away from a
// confined server below unixSocketABI:
//
//   - socket(AF_UNIX, …) fails with EACCES, so nothing can connect to (or
//     listen on) a named or abstract unix socket;
//   - socketpair(AF_UNIX, SOCK_DGRAM, …) fails with EACCES: a datagram
//     socket may send to any named address even once connected, while a
//     connected stream or seqpacket pair cannot reach anything but its
//     peer, so those (what node and others use to talk to their children)
//     keep working, as do pipes;
//   - io_uring_setup fails with EPERM: IORING_OP_SOCKET makes sockets
//     without the socket system call;
//   - any system call through another ABI than the native one (i386 on
//     x86-64, where socketcall(2) would pass its arguments in memory the
//     filter cannot read, x32, AArch32) fails with EPERM.
//
// Everything else, other socket families included (AF_INET stays as it
// is: the network is not confined), is allowed.
//
// With streams (an observed server, whose every connect the observer
// checks: connect_linux.go) socket(AF_UNIX, SOCK_STREAM or SOCK_SEQPACKET)
// is allowed; a datagram unix socket stays refused.
func noUnixSockets(arch uint32, streams bool) []unix.SockFilter {
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		and  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		allw = unix.SECCOMP_RET_ALLOW
		eacc = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		eprm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	)
	// socket(AF_UNIX, …): refused, or allowed by its type with streams.
	unixSocket := bpfStmt(ret, eacc)
	if streams {
		unixSocket = bpfStmt(ret, allw)
	}
	// Jump offsets count the instructions skipped; the comments number
	// the instructions.
	return []unix.SockFilter{
		/* 0 */ bpfStmt(ld, offArch),
		/* 1 */ bpfJump(jeq, arch, 1, 0),
		/* 2 */ bpfStmt(ret, eprm), // a foreign ABI
		/* 3 */ bpfStmt(ld, offNr),
		/* 4 */ bpfJump(jge, x32Bit, 0, 1),
		/* 5 */ bpfStmt(ret, eprm), // x32
		/* 6 */ bpfJump(jeq, unix.SYS_SOCKET, 3, 0),
		/* 7 */ bpfJump(jeq, unix.SYS_SOCKETPAIR, 11, 0),
		/* 8 */ bpfJump(jeq, unix.SYS_IO_URING_SETUP, 17, 0),
		/* 9 */ bpfStmt(ret, allw),
		// socket: the family, then the type less its flags
		/* 10 */ bpfStmt(ld, offArg0),
		/* 11 */ bpfJump(jeq, unix.AF_UNIX, 1, 0),
		/* 12 */ bpfStmt(ret, allw),
		/* 13 */ bpfStmt(ld, offArg1),
		/* 14 */ bpfStmt(and, 0xf), // SOCK_TYPE_MASK
		/* 15 */ bpfJump(jeq, unix.SOCK_STREAM, 2, 0),
		/* 16 */ bpfJump(jeq, unix.SOCK_SEQPACKET, 1, 0),
		/* 17 */ bpfStmt(ret, eacc), // a datagram (or raw) unix socket
		/* 18 */ unixSocket,
		// socketpair: the family, then the type less its flags
		/* 19 */ bpfStmt(ld, offArg0),
		/* 20 */ bpfJump(jeq, unix.AF_UNIX, 0, 3),
		/* 21 */ bpfStmt(ld, offArg1),
		/* 22 */ bpfStmt(and, 0xf), // SOCK_TYPE_MASK
		/* 23 */ bpfJump(jeq, unix.SOCK_DGRAM, 1, 0),
		/* 24 */ bpfStmt(ret, allw),
		/* 25 */ bpfStmt(ret, eacc), // a datagram pair
		/* 26 */ bpfStmt(ret, eprm), // io_uring_setup
	}
}

// sealUnixSockets installs noUnixSockets on the calling thread, which
// keeps it across execve. no_new_privs must be set already (restrict sets
// it for Landlock).
func sealUnixSockets(streams bool) error {
	if nativeArch == 0 {
		return fmt.Errorf("no system call filter for %s: unix sockets cannot be taken from the server", runtime.GOARCH)
	}
	prog := noUnixSockets(nativeArch, streams)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %v", e)
	}
	runtime.KeepAlive(prog)
	return nil
}
