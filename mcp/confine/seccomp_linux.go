package confine

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// installFilter puts the calling thread (and what it executes) under the
// filter prog (nativeFilter's encoding, which Wrap carries to the child
// in its spec). no_new_privs must be set already (restrict sets it for
// Landlock). With observed it returns the listener of the calls the
// filter sends to Rootkeeper, -1 otherwise.
func installFilter(prog []byte, observed bool) (int, error) {
	insns, err := decodeFilter(prog)
	if err != nil {
		return -1, err
	}
	raw := make([]unix.SockFilter, len(insns))
	for i, in := range insns {
		raw[i] = unix.SockFilter{Code: in.code, Jt: in.jt, Jf: in.jf, K: in.k}
	}
	fprog := unix.SockFprog{Len: uint16(len(raw)), Filter: &raw[0]}
	flags := uintptr(0)
	if observed {
		// Once Rootkeeper holds a call, only a fatal signal interrupts it
		// (Linux 5.19): a call it does itself (a connect, say) is never
		// interrupted and asked again, which would do it twice.
		flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
	}
	fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	if e == unix.EINVAL && observed {
		fd, _, e = unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	}
	runtime.KeepAlive(raw)
	if e != 0 {
		return -1, fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %v", e)
	}
	if !observed {
		return -1, nil
	}
	return int(fd), nil
}
