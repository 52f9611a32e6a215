package confine

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// nativeArch is the AUDIT_ARCH_* value of the only system call ABI a
// confined server may use; 0 where the table has no numbers for this
// architecture (KernelABI then says servers cannot be confined here).
var nativeArch = map[string]uint32{
	"amd64": archX86_64,
	"arm64": archAArch64,
}[runtime.GOARCH]

// installFilter puts the calling thread (and what it executes) under the
// filter of mode m (filterProgram). no_new_privs must be set already
// (restrict sets it for Landlock). With m.observed it returns the
// listener of the calls the filter sends to Rootkeeper, -1 otherwise.
func installFilter(m filterMode) (int, error) {
	if nativeArch == 0 {
		return -1, fmt.Errorf("no system call filter for %s", runtime.GOARCH)
	}
	prog, err := filterProgram(nativeArch, m)
	if err != nil {
		return -1, fmt.Errorf("system call filter: %v", err)
	}
	raw := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		raw[i] = unix.SockFilter{Code: in.code, Jt: in.jt, Jf: in.jf, K: in.k}
	}
	fprog := unix.SockFprog{Len: uint16(len(raw)), Filter: &raw[0]}
	flags := uintptr(0)
	if m.observed {
		// Once Rootkeeper holds a call, only a fatal signal interrupts it
		// (Linux 5.19): a call it does itself (a connect, say) is never
		// interrupted and asked again, which would do it twice.
		flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
	}
	fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	if e == unix.EINVAL && m.observed {
		fd, _, e = unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	}
	runtime.KeepAlive(raw)
	if e != 0 {
		return -1, fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %v", e)
	}
	if !m.observed {
		return -1, nil
	}
	return int(fd), nil
}
