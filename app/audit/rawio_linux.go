//go:build linux && (amd64 || arm64)

package audit

import (
	"io/fs"
	"os"
	"syscall"
	"unsafe"
)

// writeAll writes p to f with raw write system calls (see rotating).
func writeAll(f *os.File, p []byte) error {
	fd := f.Fd()
	for len(p) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		switch e {
		case 0:
			p = p[n:]
		case syscall.EINTR:
		default:
			return &fs.PathError{Op: "write", Path: f.Name(), Err: e}
		}
	}
	return nil
}

// statSame is the size of the file at path and whether it is the file id
// describes (the same device and inode), by a raw fstatat (see rotating).
func statSame(path string, id os.FileInfo) (size int64, same bool, err error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return 0, false, err
	}
	var st syscall.Stat_t
	dirfd := atFDCWD
	for {
		_, _, e := syscall.RawSyscall6(fstatat, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&st)), 0, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return 0, false, &fs.PathError{Op: "stat", Path: path, Err: e}
		}
		break
	}
	was, ok := id.Sys().(*syscall.Stat_t)
	return st.Size, ok && was.Dev == st.Dev && was.Ino == st.Ino, nil
}

// atFDCWD is AT_FDCWD: a path relative to the working directory.
const atFDCWD = -0x64
