package detect

import (
	"bufio"
	"encoding/binary"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dir is an open folder.
type dir struct{ fd int }

// dirRef is an open folder whose sub-folders are still to be opened
// relative to it, which spares the kernel a walk of the whole path for each.
// Each pending sub-folder holds one reference; the last release closes it.
type dirRef struct {
	fd   int
	refs atomic.Int32
}

// release drops one reference; r may be nil.
func (r *dirRef) release() {
	if r != nil && r.refs.Add(-1) == 0 {
		closeFd(r.fd)
	}
}

// hold adds n references to r, which the caller holds one of.
func (r *dirRef) hold(n int) { r.refs.Add(int32(n)) }

// beneath says whether openDir or openPath must refuse symbolic links in
// every part of the path: for a sub-folder opened by its whole path, or by
// more than its name relative to a folder above its parent (below folders
// the re-scan cache vouched for without opening them). A search folder's
// path has none, symlinks resolved.
func beneath(parent *dirRef, name string, nameOff int) bool {
	if parent == nil {
		return nameOff > 0
	}
	return strings.IndexByte(name, '/') >= 0
}

// noatime is cleared the first time O_NOATIME is refused (it is allowed only
// on one's own files), after which folders are opened without it.
var noatime atomic.Bool

func init() { noatime.Store(true) }

// noOpenat2 is set when openat2 is missing (Linux before 5.6).
var noOpenat2 atomic.Bool

// openDir opens the folder at path, relative to parent when there is one
// (then path[nameOff:] is its name there, or its path below parent; a
// nameOff > 0 without a parent says path is a sub-folder below a search
// folder). It never follows a symbolic
// link, and asks the kernel not to update the folder's access time, so that
// a scan does not write to every inode it reads.
func openDir(parent *dirRef, path string, nameOff int) (dir, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
	at, name := unix.AT_FDCWD, path
	if parent != nil {
		at, name = parent.fd, path[nameOff:]
	}
	for {
		f := flags
		if noatime.Load() {
			f |= unix.O_NOATIME
		}
		var fd int
		var err error
		if beneath(parent, name, nameOff) && !noOpenat2.Load() {
			fd, err = unix.Openat2(at, name, &unix.OpenHow{Flags: uint64(f), Resolve: unix.RESOLVE_NO_SYMLINKS})
			if err == unix.ENOSYS || err == unix.EPERM && f&unix.O_NOATIME == 0 {
				noOpenat2.Store(true) // before Linux 5.6, or refused by a seccomp filter
				continue
			}
		} else {
			fd, err = openat(at, name, f)
		}
		if err == unix.EPERM && f&unix.O_NOATIME != 0 {
			noatime.Store(false)
			continue
		}
		if err != unix.EINTR {
			return dir{fd}, err
		}
	}
}

// share keeps d open for n sub-folders to be opened relative to it and
// returns the reference they hold, or closes d and returns nil when n is 0.
func (d dir) share(n int) *dirRef {
	if n == 0 {
		d.close()
		return nil
	}
	r := &dirRef{fd: d.fd}
	r.refs.Store(int32(n))
	return r
}

func (d dir) close() { closeFd(d.fd) }

// closeFd closes a folder. It is a raw system call, which spares the
// scheduler's bookkeeping of a call that may block: closing a folder frees
// memory and never waits for the disk.
func closeFd(fd int) { unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0) }

// openat is unix.Openat without its allocation of a C string: a name that
// fits is copied to the stack.
func openat(at int, name string, flags int) (int, error) {
	var buf [256]byte
	var p *byte
	if len(name) < len(buf) && strings.IndexByte(name, 0) < 0 {
		copy(buf[:], name)
		p = &buf[0]
	} else {
		var err error
		if p, err = unix.BytePtrFromString(name); err != nil {
			return -1, err
		}
	}
	fd, _, e := unix.Syscall6(unix.SYS_OPENAT, uintptr(at), uintptr(unsafe.Pointer(p)), uintptr(flags), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// list calls fn with the name and type of every entry, reading with
// getdents64 into buf; it stats an entry only when the file system does not
// report its type. The name passed to fn is valid only during the call.
// dev is 0: on Linux the walk learns of other file systems from
// mountPoints rather than from a stat per folder.
//
// endMark says the folder is on a file system whose last entry carries
// endOfDir as its offset once the folder has been read to the end (see
// hasEndMark); list then skips the getdents64 call that would return 0.
func (d dir) list(buf []byte, endMark bool, fn func(name []byte, typ entryType)) (dev uint64, err error) {
	for {
		n, err := unix.Getdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n <= 0 {
			return 0, nil
		}
		// struct linux_dirent64 { u64 ino; s64 off; u16 reclen; u8 type; char name[]; }
		var last uint64
		for off := 0; off+19 <= n; {
			last = binary.NativeEndian.Uint64(buf[off+8:])
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen == 0 || off+reclen > n {
				break
			}
			ino := binary.NativeEndian.Uint64(buf[off:])
			typ := buf[off+18]
			name := buf[off+19 : off+reclen]
			off += reclen
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			if ino == 0 || isDots(name) {
				continue
			}
			var t entryType
			switch typ {
			case unix.DT_DIR:
				t = typeDir
			case unix.DT_REG:
				t = typeFile
			case unix.DT_LNK:
				t = typeSymlink
			case unix.DT_UNKNOWN:
				t = d.lstatType(string(name))
			default:
				t = typeOther
			}
			fn(name, t)
		}
		if endMark && last == endOfDir {
			return 0, nil
		}
	}
}

// endOfDir is the offset ext4 gives the last entry of a hashed (indexed)
// folder once it has returned every entry: EXT4_HTREE_EOF_64BIT, a value no
// entry's hash position takes (ext4fs_dirhash steers clear of it). Its
// linear and inline folders use byte offsets, which never come near it.
const endOfDir = 1<<63 - 1

// hasEndMark says whether the folder at path is on ext4 (or ext2/3 run by
// the ext4 driver, which share its magic number), whose folders mark their
// end with endOfDir.
func hasEndMark(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Type == unix.EXT4_SUPER_MAGIC
}

func (d dir) lstatType(name string) entryType {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return typeOther
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return typeDir
	case unix.S_IFREG:
		return typeFile
	case unix.S_IFLNK:
		return typeSymlink
	}
	return typeOther
}

// mountPoints returns every mount point and the device mounted there, read
// from /proc/self/mountinfo.
func mountPoints() (map[string]uint64, bool) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, false
	}
	defer f.Close()
	m, err := parseMountInfo(bufio.NewScanner(f))
	if err != nil {
		return nil, false
	}
	return m, true
}

// parseMountInfo reads lines like
//
//	36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw
//
// (ID, parent ID, major:minor, root, mount point, ...; see proc(5)).
func parseMountInfo(sc *bufio.Scanner) (map[string]uint64, error) {
	m := map[string]uint64{}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		maj, min, ok := strings.Cut(f[2], ":")
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(maj, 10, 32)
		b, err2 := strconv.ParseUint(min, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		m[unescapeMount(f[4])] = unix.Mkdev(uint32(a), uint32(b))
	}
	return m, sc.Err()
}

// unescapeMount undoes the octal escapes (\040 for a space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readFile returns the contents of a small file (HEAD, a gitdir file, a git
// config) with fewer system calls than os.ReadFile: no stat, no poller.
//
// The open never waits: a FIFO where HEAD should be (any repository can hold
// one) would otherwise block the scan forever. O_NONBLOCK makes such an open
// return at once and its read return nothing or EAGAIN; on regular files it
// changes nothing.
func readFile(path string) ([]byte, error) {
	var fd int
	var err error
	for {
		f := unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY
		if noatime.Load() {
			f |= unix.O_NOATIME
		}
		fd, err = unix.Open(path, f, 0)
		if err == unix.EPERM && f&unix.O_NOATIME != 0 {
			noatime.Store(false)
			continue
		}
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 1<<10) // HEAD, a gitdir file and most configs fit
	for n := 0; ; {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		n += m
		switch {
		case m == 0:
			return buf[:n], nil
		case n == len(buf):
			if len(buf) >= maxConfig {
				return nil, &fs.PathError{Op: "read", Path: path, Err: errTooLarge}
			}
			buf = append(buf, make([]byte, len(buf))...)
		case n < 512:
			// A short read of a small regular file is its end; this spares
			// HEAD and gitdir files the read that returns 0.
			return buf[:n], nil
		}
	}
}

// stampOf is the stamp of a folder's stat, ok only for a folder.
func stampOf(st *unix.Stat_t) (stamp, bool) {
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return stamp{}, false
	}
	return stamp{ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}

// statDir stats the folder at path without following a symbolic link in its
// last part, relative to parent when there is one (as openDir). ok is false
// for anything but a folder.
func statDir(parent *dirRef, path string, nameOff int) (stamp, bool) {
	at, name := unix.AT_FDCWD, path
	if parent != nil {
		at, name = parent.fd, path[nameOff:]
	}
	var st unix.Stat_t
	for {
		err := unix.Fstatat(at, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return stamp{}, false
		}
		return stampOf(&st)
	}
}

// stamp is the stat of the open folder d.
func (d dir) stamp() (stamp, bool) {
	var st unix.Stat_t
	if unix.Fstat(d.fd, &st) != nil {
		return stamp{}, false
	}
	return stampOf(&st)
}

// openPath opens the folder at path (as openDir: relative to parent when
// there is one, never through a symbolic link) with O_PATH, which reads
// nothing: for the stamp of a folder the re-scan cache may vouch for, and
// for its sub-folders to be stat'ed relative to it. ok is false when it is
// not a folder or cannot be opened.
func openPath(parent *dirRef, path string, nameOff int) (dir, stamp, bool) {
	const flags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	at, name := unix.AT_FDCWD, path
	if parent != nil {
		at, name = parent.fd, path[nameOff:]
	}
	for {
		var fd int
		var err error
		if beneath(parent, name, nameOff) && !noOpenat2.Load() {
			fd, err = unix.Openat2(at, name, &unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_NO_SYMLINKS})
		} else {
			fd, err = unix.Openat(at, name, flags, 0)
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return dir{}, stamp{}, false
		}
		d := dir{fd}
		st, ok := d.stamp()
		if !ok {
			d.close()
		}
		return d, st, ok
	}
}
