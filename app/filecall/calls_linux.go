//go:build linux && (amd64 || arm64)

package filecall

import (
	"path/filepath"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Calls makes system calls on the files of one folder: raw ones where its
// file system is local, ordinary ones elsewhere (see the package's doc).
// Each call is made again when a signal interrupts it. The zero Calls
// makes ordinary ones.
type Calls struct{ raw bool }

// In is the Calls for files in the folder dir.
func In(dir string) Calls { return Calls{raw: isLocal(dir)} }

// For is the Calls for the file at path (In its folder).
func For(path string) Calls { return In(filepath.Dir(path)) }

// Raw reports whether c makes raw calls.
func (c Calls) Raw() bool { return c.raw }

// locals caches, per folder, whether its file system is local.
var locals sync.Map // string → bool

// localFileSystems are the file systems whose calls return without
// waiting on anything but the local disk: an allowlist, so that one not
// named here (NFS, SMB, FUSE, 9p, virtiofs, ...) gets ordinary calls.
var localFileSystems = map[int64]bool{
	unix.EXT4_SUPER_MAGIC:      true, // ext2, ext3 and ext4 share it
	unix.XFS_SUPER_MAGIC:       true,
	unix.BTRFS_SUPER_MAGIC:     true,
	unix.TMPFS_MAGIC:           true,
	unix.RAMFS_MAGIC:           true,
	unix.F2FS_SUPER_MAGIC:      true,
	unix.BCACHEFS_SUPER_MAGIC:  true,
	unix.OVERLAYFS_SUPER_MAGIC: true,
	0x2fc12fc1:                 true, // ZFS
}

// isLocal reports whether dir's file system is one of localFileSystems,
// asking statfs(2) (the ordinary way: it may wait) once per folder. A
// folder that cannot be asked (not made yet) is not local, and is asked
// again next time.
func isLocal(dir string) bool {
	if v, ok := locals.Load(dir); ok {
		return v.(bool)
	}
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return false
	}
	local := localFileSystems[int64(st.Type)]
	locals.Store(dir, local)
	return local
}

// errnoErr is e as an error: nil for 0.
func errnoErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// rawInts is a raw system call whose arguments are all numbers, made
// again when a signal interrupted it.
func rawInts(trap, a1, a2, a3 uintptr) (uintptr, error) {
	for {
		r, _, e := syscall.RawSyscall(trap, a1, a2, a3)
		if e != syscall.EINTR {
			return r, errnoErr(e)
		}
	}
}

// rawAt is a raw system call whose second argument points at memory (a
// path, a buffer, a stat): p is an unsafe.Pointer, not a uintptr, up to
// the call itself, so that what it points at is kept and, on a stack,
// followed when the stack moves. It is made again when a signal
// interrupted it.
func rawAt(trap, a1 uintptr, p unsafe.Pointer, a3, a4 uintptr) (uintptr, error) {
	for {
		r, _, e := syscall.RawSyscall6(trap, a1, uintptr(p), a3, a4, 0, 0)
		if e != syscall.EINTR {
			return r, errnoErr(e)
		}
	}
}

// atFDCWD is AT_FDCWD: a path relative to the working folder.
const atFDCWD = ^uintptr(99) // -100

// Open is open(2) of path.
func (c Calls) Open(path string, flag int, perm uint32) (int, error) {
	if !c.raw {
		return ordinaryN(func() (int, error) { return syscall.Open(path, flag, perm) })
	}
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	fd, err := rawAt(unix.SYS_OPENAT, atFDCWD, unsafe.Pointer(p), uintptr(flag|syscall.O_LARGEFILE), uintptr(perm))
	if err != nil {
		return -1, err
	}
	return int(fd), nil
}

// Close is close(2); it is not made again after a signal (the descriptor
// is gone either way).
func (c Calls) Close(fd int) error {
	if !c.raw {
		return syscall.Close(fd)
	}
	_, _, e := syscall.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	return errnoErr(e)
}

// Fstat is fstat(2).
func (c Calls) Fstat(fd int, st *syscall.Stat_t) error {
	if !c.raw {
		return ordinary(func() error { return syscall.Fstat(fd, st) })
	}
	_, err := rawAt(unix.SYS_FSTAT, uintptr(fd), unsafe.Pointer(st), 0, 0)
	return err
}

// Read is read(2) into p.
func (c Calls) Read(fd int, p []byte) (int, error) {
	if !c.raw {
		return ordinaryN(func() (int, error) { return syscall.Read(fd, p) })
	}
	n, err := rawAt(unix.SYS_READ, uintptr(fd), bufPtr(p), uintptr(len(p)), 0)
	return int(n), err
}

// Write is write(2) of p.
func (c Calls) Write(fd int, p []byte) (int, error) {
	if !c.raw {
		return ordinaryN(func() (int, error) { return syscall.Write(fd, p) })
	}
	n, err := rawAt(unix.SYS_WRITE, uintptr(fd), bufPtr(p), uintptr(len(p)), 0)
	return int(n), err
}

// Stat is stat(2) of path (following a last link).
func (c Calls) Stat(path string, st *syscall.Stat_t) error {
	if !c.raw {
		return ordinary(func() error { return syscall.Stat(path, st) })
	}
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	for {
		// Two pointers: the conversions stay in the call's own arguments.
		_, _, e := syscall.RawSyscall6(sysFstatat, atFDCWD, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(st)), 0, 0, 0)
		if e != syscall.EINTR {
			return errnoErr(e)
		}
	}
}

// Pwrite is pwrite(2) of p at off.
func (c Calls) Pwrite(fd int, p []byte, off int64) (int, error) {
	if !c.raw {
		return ordinaryN(func() (int, error) { return syscall.Pwrite(fd, p, off) })
	}
	n, err := rawAt(unix.SYS_PWRITE64, uintptr(fd), bufPtr(p), uintptr(len(p)), uintptr(off))
	return int(n), err
}

// Ftruncate is ftruncate(2).
func (c Calls) Ftruncate(fd int, size int64) error {
	if !c.raw {
		return ordinary(func() error { return syscall.Ftruncate(fd, size) })
	}
	_, err := rawInts(unix.SYS_FTRUNCATE, uintptr(fd), uintptr(size), 0)
	return err
}

// Fchmod is fchmod(2).
func (c Calls) Fchmod(fd int, mode uint32) error {
	if !c.raw {
		return ordinary(func() error { return syscall.Fchmod(fd, mode) })
	}
	_, err := rawInts(unix.SYS_FCHMOD, uintptr(fd), uintptr(mode), 0)
	return err
}

// Getdents is getdents64(2) into buf, what syscall.ParseDirent reads.
func (c Calls) Getdents(fd int, buf []byte) (int, error) {
	if !c.raw {
		return ordinaryN(func() (int, error) { return syscall.ReadDirent(fd, buf) })
	}
	n, err := rawAt(unix.SYS_GETDENTS64, uintptr(fd), bufPtr(buf), uintptr(len(buf)), 0)
	return int(n), err
}

// Unlink is unlink(2) of path.
func (c Calls) Unlink(path string) error {
	if !c.raw {
		return ordinary(func() error { return syscall.Unlink(path) })
	}
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	_, err = rawAt(unix.SYS_UNLINKAT, atFDCWD, unsafe.Pointer(p), 0, 0)
	return err
}

// Rename is rename(2) of from to to.
func (c Calls) Rename(from, to string) error { return c.renameat2(from, to, 0) }

// Exchange swaps the names from and to in one step (renameat2's
// RENAME_EXCHANGE); both must exist.
func (c Calls) Exchange(from, to string) error { return c.renameat2(from, to, unix.RENAME_EXCHANGE) }

func (c Calls) renameat2(from, to string, flags uint) error {
	if !c.raw {
		if flags == 0 {
			return ordinary(func() error { return syscall.Rename(from, to) })
		}
		return ordinary(func() error { return unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, flags) })
	}
	f, err := syscall.BytePtrFromString(from)
	if err != nil {
		return err
	}
	t, err := syscall.BytePtrFromString(to)
	if err != nil {
		return err
	}
	for {
		// Two paths: the conversions stay in the call's own arguments.
		_, _, e := syscall.RawSyscall6(unix.SYS_RENAMEAT2, atFDCWD, uintptr(unsafe.Pointer(f)), atFDCWD, uintptr(unsafe.Pointer(t)), uintptr(flags), 0)
		if e != syscall.EINTR {
			return errnoErr(e)
		}
	}
}

// Lease is fcntl(2)'s F_SETLEASE: it takes (unix.F_RDLCK, unix.F_WRLCK)
// or gives back (unix.F_UNLCK) a lease on fd without waiting.
func (c Calls) Lease(fd, how int) error {
	if !c.raw {
		_, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, how)
		return err
	}
	_, err := rawInts(unix.SYS_FCNTL, uintptr(fd), unix.F_SETLEASE, uintptr(how))
	return err
}

// Flock is flock(2): it takes the lock how (LOCK_SH, LOCK_EX) or gives it
// back (LOCK_UN). Only a lock that another holder keeps is waited for, and
// that wait goes through the scheduler.
func (c Calls) Flock(fd, how int) error {
	if c.raw {
		_, err := rawInts(unix.SYS_FLOCK, uintptr(fd), uintptr(how|syscall.LOCK_NB), 0)
		if err != syscall.EWOULDBLOCK || how&syscall.LOCK_NB != 0 {
			return err
		}
	}
	return ordinary(func() error { return syscall.Flock(fd, how) })
}

// bufPtr points at p's first byte, or is nil for an empty p.
func bufPtr(p []byte) unsafe.Pointer {
	if len(p) == 0 {
		return nil
	}
	return unsafe.Pointer(&p[0])
}
