package confine

import (
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock governs what a process may open, create, rename, remove and
// run, not what it may do to a file's metadata: chmod, chown, extended
// attributes and times are left to the ordinary permission checks. A
// confined server could therefore make ~/.ssh/id_ed25519 world-readable by
// its path, or change the mode of a file handed to it for a read through
// the descriptor. So the observer also sees those calls and does each
// itself, on exactly the file the call names, when that file is in the
// server's read-write folders (its roots, its temp folder) and not in a
// protected one; anywhere else the call fails with EPERM.
//
// Why the observer does the call rather than letting it go on: a
// notification is answered after the path was read from the server's
// memory, and another thread of the server can change that memory, or
// the descriptor table, before the kernel runs the call. Letting it go on
// would check one file and change another. Instead Rootkeeper takes its
// own reference to the file (pidfd_getfd for a descriptor, an O_PATH
// open of the path refusing magic links), checks where that reference
// is, and changes that reference: what was checked is what changes.

// The kinds of metadata call (metaShape.kind).
const (
	metaMode        = iota + 1 // chmod: arg is the mode
	metaOwner                  // chown: arg is the uid, arg+1 the gid
	metaXattrSet               // setxattr: arg name, arg+1 value, arg+2 size, arg+3 flags
	metaXattrRemove            // removexattr: arg name
	metaTimes                  // utime*: arg the times, in times' layout
)

// The layouts of the times a call passes (metaShape.times).
const (
	timesUtimbuf  = iota + 1 // struct utimbuf: seconds, seconds
	timesTimeval             // struct timeval[2]
	timesTimespec            // struct timespec[2], with UTIME_NOW and UTIME_OMIT
)

// metaShape says where a metadata call keeps its arguments: indexes into
// seccomp_data.args; fd is the descriptor (path -1) or the folder a
// relative path starts from (-1: the working folder); flags the AT_ flags
// (-1: none).
type metaShape struct {
	kind     int
	fd, path int
	flags    int
	nofollow bool // lchown and the l*xattr calls
	arg      int
	times    int
}

// meta answers a metadata call of the server (see above) with the errno
// to fail it with, 0 for success.
func (o *Observer) meta(fd int, n *seccompNotif, shape metaShape) unix.Errno {
	obj, errno := o.metaObject(n, shape)
	if errno != 0 {
		return errno
	}
	defer unix.Close(obj)
	// What was read and opened belongs to this call only if it still waits.
	id := n.id
	if quickIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) != nil {
		return unix.ENOENT
	}
	where := location(obj)
	if where == "" || !o.writableAt(where) || o.protected(where) {
		return unix.EPERM
	}
	return setMeta(int(n.pid), obj, n, shape)
}

// metaObject opens what a metadata call names (O_PATH): the descriptor it
// gives, or the path it names relative to one, following the last link
// only where the call does.
func (o *Observer) metaObject(n *seccompNotif, shape metaShape) (int, unix.Errno) {
	pid := int(n.pid)
	var flags uint64
	if shape.flags >= 0 {
		flags = n.args[shape.flags]
	}
	nofollow := shape.nofollow || flags&unix.AT_SYMLINK_NOFOLLOW != 0
	name := ""
	byFD := shape.path < 0
	if !byFD {
		addr := uintptr(n.args[shape.path])
		if addr == 0 && shape.kind == metaTimes && shape.times == timesTimespec {
			byFD = true // utimensat(fd, NULL, …) changes the descriptor's file
		} else {
			s, err := readString(pid, addr)
			if err != nil {
				return -1, errnoOf(err)
			}
			if s == "" {
				if flags&unix.AT_EMPTY_PATH == 0 {
					return -1, unix.ENOENT
				}
				byFD = true
			}
			name = s
		}
	}
	var obj int
	var err error
	if byFD {
		obj, err = serverFile(pid, int(int32(n.args[shape.fd])))
	} else {
		obj, err = o.openNamed(pid, shape, n, name, nofollow)
	}
	if err != nil {
		return -1, errnoOf(err)
	}
	return obj, 0
}

// setMeta does the call's change on obj, an O_PATH descriptor of what it
// named, with the call's own arguments read from the server.
func setMeta(pid, obj int, n *seccompNotif, shape metaShape) unix.Errno {
	var st unix.Stat_t
	if err := unix.Fstat(obj, &st); err != nil {
		return errnoOf(err)
	}
	link := st.Mode&unix.S_IFMT == unix.S_IFLNK
	self := "/proc/self/fd/" + strconv.Itoa(obj)
	var err error
	switch shape.kind {
	case metaMode:
		if link {
			return unix.EOPNOTSUPP // Linux has no mode on a symbolic link
		}
		err = unix.Fchmodat(unix.AT_FDCWD, self, uint32(n.args[shape.arg]&0o7777), 0)
	case metaOwner:
		err = unix.Fchownat(obj, "", int(int32(n.args[shape.arg])), int(int32(n.args[shape.arg+1])), unix.AT_EMPTY_PATH)
	case metaXattrSet, metaXattrRemove:
		if link {
			return unix.EPERM // user attributes are refused on links; others need privileges
		}
		return setXattr(pid, self, n, shape)
	case metaTimes:
		return setTimes(pid, obj, n, shape)
	}
	return errnoOf(err)
}

// setXattr sets or removes the extended attribute the call names on the
// file self (a /proc/self/fd path).
func setXattr(pid int, self string, n *seccompNotif, shape metaShape) unix.Errno {
	attr, err := readString(pid, uintptr(n.args[shape.arg]))
	if err != nil {
		return errnoOf(err)
	}
	if shape.kind == metaXattrRemove {
		return errnoOf(unix.Removexattr(self, attr))
	}
	size := n.args[shape.arg+2]
	if size > 64<<10 {
		return unix.E2BIG
	}
	value := make([]byte, size)
	if size > 0 {
		if err := readMem(pid, uintptr(n.args[shape.arg+1]), value); err != nil {
			return errnoOf(err)
		}
	}
	return errnoOf(unix.Setxattr(self, attr, value, int(n.args[shape.arg+3])))
}

// setTimes sets the times the call gives (or now) on obj.
func setTimes(pid, obj int, n *seccompNotif, shape metaShape) unix.Errno {
	ts, ok := readTimes(pid, uintptr(n.args[shape.arg]), shape.times)
	if !ok {
		return unix.EFAULT
	}
	var p unsafe.Pointer
	if ts != nil {
		p = unsafe.Pointer(&ts[0])
	}
	empty := []byte{0}
	_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(obj), uintptr(unsafe.Pointer(&empty[0])), uintptr(p), unix.AT_EMPTY_PATH, 0, 0)
	if e != 0 {
		return e
	}
	return 0
}

// openNamed opens the path a call named, as openAs does, from the
// descriptor the call gives (or its working folder).
func (o *Observer) openNamed(pid int, shape metaShape, n *seccompNotif, name string, nofollow bool) (int, error) {
	dirfd := int32(unix.AT_FDCWD)
	if shape.fd >= 0 {
		dirfd = int32(n.args[shape.fd])
	}
	return openAs(pid, dirfd, name, nofollow)
}

// openAs opens the path name, as the kernel would resolve it for process
// pid (from its working folder, dirfd AT_FDCWD, or from its descriptor
// dirfd), O_PATH, refusing magic links: /proc/self and /dev/fd resolve
// for Rootkeeper, not the server, so a path through them is refused.
func openAs(pid int, dirfd int32, name string, nofollow bool) (int, error) {
	base := unix.AT_FDCWD
	if !strings.HasPrefix(name, "/") {
		var err error
		if base, err = serverFile(pid, int(dirfd)); err != nil {
			return -1, err
		}
		defer unix.Close(base)
	}
	flags := uint64(unix.O_PATH | unix.O_CLOEXEC)
	if nofollow {
		flags |= unix.O_NOFOLLOW
	}
	return unix.Openat2(base, name, &unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_NO_MAGICLINKS})
}

// location is where descriptor obj of Rootkeeper's is, as the kernel
// names it (resolved), "" when that cannot be read.
func location(obj int) string {
	where, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(obj))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(where, " (deleted)")
}

// serverFile is Rootkeeper's own descriptor for the server's descriptor
// sfd (AT_FDCWD: its working folder): the same open file, whatever the
// server does to its table after.
func serverFile(pid, sfd int) (int, error) {
	if sfd == unix.AT_FDCWD {
		return unix.Open("/proc/"+strconv.Itoa(pid)+"/cwd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	// The notification names the calling thread; its descriptor table is
	// its process's (unless it unshared it, which PIDFD_THREAD also sees).
	pidfd, err := unix.PidfdOpen(pid, pidfdThread)
	if err == unix.EINVAL {
		// Before Linux 6.9: a pidfd names a process, by its leader.
		leader := tgidOf(pid)
		if leader == 0 {
			leader = pid
		}
		pidfd, err = unix.PidfdOpen(leader, 0)
	}
	if err != nil {
		return -1, err
	}
	defer unix.Close(pidfd)
	f, err := unix.PidfdGetfd(pidfd, sfd, 0)
	if err == unix.ESRCH {
		return -1, unix.EBADF
	}
	return f, err
}

// pidfdThread is PIDFD_THREAD (Linux 6.9), a pidfd for one thread, which
// x/sys does not name.
const pidfdThread = unix.O_EXCL

// readTimes reads a call's two times as utimensat takes them; nil (with
// ok) for a NULL pointer, which means now.
func readTimes(pid int, addr uintptr, layout int) ([]unix.Timespec, bool) {
	if addr == 0 {
		return nil, true
	}
	var raw [4]int64
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&raw[0])), 32)
	switch layout {
	case timesUtimbuf:
		if readMem(pid, addr, buf[:16]) != nil {
			return nil, false
		}
		return []unix.Timespec{{Sec: raw[0]}, {Sec: raw[1]}}, true
	case timesTimeval:
		if readMem(pid, addr, buf) != nil {
			return nil, false
		}
		return []unix.Timespec{{Sec: raw[0], Nsec: raw[1] * 1000}, {Sec: raw[2], Nsec: raw[3] * 1000}}, true
	default:
		if readMem(pid, addr, buf) != nil {
			return nil, false
		}
		return []unix.Timespec{{Sec: raw[0], Nsec: raw[1]}, {Sec: raw[2], Nsec: raw[3]}}, true
	}
}

// writableAt reports whether path is in one of the server's read-write
// folders, or a folder granted since it started.
func (o *Observer) writableAt(path string) bool {
	return o.writableRoot(path) != ""
}

// errnoOf is err as an errno (EPERM for one that is not).
func errnoOf(err error) unix.Errno {
	if err == nil {
		return 0
	}
	if e, ok := err.(unix.Errno); ok {
		return e
	}
	return unix.EPERM
}
