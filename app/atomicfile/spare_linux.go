package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// writeSpare replaces path with data through the spare o.Spare (see
// Options.Spare); done is always true on Linux. On any error the file is
// left as it was and the spare is removed (its bytes are of no use, and a
// failed write leaves no file behind).
func writeSpare(path string, data []byte, o Options) (done bool, err error) {
	dir := filepath.Dir(path)
	spare := filepath.Join(dir, o.Spare)
	fd, st, err := openSpare(spare)
	if err != nil {
		return true, err
	}
	defer func() {
		if err != nil {
			syscall.Unlink(spare)
		}
	}()
	if err := fill(fd, st, data, o.Perm); err != nil {
		syscall.Close(fd)
		return true, &fs.PathError{Op: "write", Path: spare, Err: err}
	}
	if err := syscall.Close(fd); err != nil {
		return true, &fs.PathError{Op: "close", Path: spare, Err: err}
	}
	if o.BeforeRename != nil {
		if err := o.BeforeRename(); err != nil {
			return true, err
		}
	}
	err = unix.Renameat2(unix.AT_FDCWD, spare, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
	switch err {
	case nil:
	case syscall.ENOENT, syscall.EINVAL, syscall.ENOSYS, syscall.EOPNOTSUPP:
		// No file yet, or a file system that cannot swap names: the
		// spare becomes the file (and the next write makes another).
		err = syscall.Rename(spare, path)
	}
	if err != nil {
		return true, &os.LinkError{Op: "rename", Old: spare, New: path, Err: err}
	}
	return true, SyncDir(dir)
}

// openSpare opens the spare for writing, made anew unless it is a regular
// file of this user's with no other name (writing in place through a link
// or a second name would change another file) that nobody else has open.
func openSpare(spare string) (int, *syscall.Stat_t, error) {
	var st syscall.Stat_t
	fd, err := open(spare, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC)
	if err == nil {
		if syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Nlink == 1 && int(st.Uid) == os.Geteuid() && openedByNobodyElse(fd) {
			return fd, &st, nil
		}
		syscall.Close(fd)
	}
	syscall.Unlink(spare)
	fd, err = open(spare, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
	if err == nil {
		err = syscall.Fstat(fd, &st)
		if err != nil {
			syscall.Close(fd)
		}
	}
	if err != nil {
		return -1, nil, &fs.PathError{Op: "open", Path: spare, Err: err}
	}
	return fd, &st, nil
}

// openedByNobodyElse says whether fd's file is open nowhere else, in this
// process or another: the kernel grants a write lease (F_SETLEASE) only
// then. The spare was the file until the save before swapped it out, so a
// reader that opened the file before that swap and reads it still (one
// that does not take the store's lock: a backup, an editor, cat) holds
// it; writing over it would change the bytes under that reader. Nobody can
// open it by the file's name any more, only by the spare's: once seen
// unopened it stays so until it is written and swapped in, and the lease
// is given back at once (held, a second opener would make the kernel
// signal this process and wait). Where leases are refused for any other
// reason (a file system without them, leases switched off) the spare is
// made anew, as a temp file would be.
func openedByNobodyElse(fd int) bool {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_WRLCK); err != nil {
		return false
	}
	unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
	return true
}

// open is open(2) of a new file's mode 0600, again when a signal
// interrupted it.
func open(path string, flag int) (int, error) {
	for {
		fd, err := syscall.Open(path, flag, 0o600)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// fill makes the spare fd (as st describes it) hold exactly data with mode
// perm, synced: written over from the start and cut to its length. Its
// data and size are synced (fdatasync), not its times; its mode, when it
// had to change, too (fsync).
func fill(fd int, st *syscall.Stat_t, data []byte, perm fs.FileMode) error {
	for off := 0; off < len(data); {
		n, err := syscall.Pwrite(fd, data[off:], int64(off))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		off += n
	}
	if st.Size != int64(len(data)) {
		if err := syscall.Ftruncate(fd, int64(len(data))); err != nil {
			return err
		}
	}
	sync := syscall.Fdatasync
	if mode := uint32(perm.Perm()); st.Mode&0o7777 != mode {
		if err := syscall.Fchmod(fd, mode); err != nil {
			return err
		}
		sync = syscall.Fsync
	}
	for {
		if err := sync(fd); err != syscall.EINTR {
			return err
		}
	}
}
