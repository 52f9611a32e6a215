//go:build linux && (amd64 || arm64)

package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"rootkeeper/app/filecall"
)

// writeSpare replaces path with data through the spare o.Spare (see
// Options.Spare); done is always true on Linux. On any error the file is
// left as it was and the spare is removed (its bytes are of no use, and a
// failed write leaves no file behind). Its calls are package filecall's,
// so that a save does not wake the runtime's monitor thread.
func writeSpare(path string, data []byte, o Options) (done bool, err error) {
	dir := filepath.Dir(path)
	c := filecall.In(dir)
	spare := filepath.Join(dir, o.Spare)
	fd, st, err := openSpare(c, spare)
	if err != nil {
		return true, err
	}
	defer func() {
		if err != nil {
			c.Unlink(spare)
		}
	}()
	if err := fill(c, fd, st, data, o.Perm); err != nil {
		c.Close(fd)
		return true, &fs.PathError{Op: "write", Path: spare, Err: err}
	}
	if err := c.Close(fd); err != nil {
		return true, &fs.PathError{Op: "close", Path: spare, Err: err}
	}
	if o.BeforeRename != nil {
		if err := o.BeforeRename(); err != nil {
			return true, err
		}
	}
	err = c.Exchange(spare, path)
	switch err {
	case nil:
	case syscall.ENOENT, syscall.EINVAL, syscall.ENOSYS, syscall.EOPNOTSUPP:
		// No file yet, or a file system that cannot swap names: the
		// spare becomes the file (and the next write makes another).
		err = c.Rename(spare, path)
	}
	if err != nil {
		return true, &os.LinkError{Op: "rename", Old: spare, New: path, Err: err}
	}
	return true, syncDir(c, dir)
}

// openSpare opens the spare for writing, made anew unless it is a regular
// file of this user's with no other name (writing in place through a link
// or a second name would change another file) that nobody else has open.
func openSpare(c filecall.Calls, spare string) (int, *syscall.Stat_t, error) {
	var st syscall.Stat_t
	fd, err := c.Open(spare, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o600)
	if err == nil {
		if c.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Nlink == 1 && int(st.Uid) == os.Geteuid() && openedByNobodyElse(c, fd) {
			return fd, &st, nil
		}
		c.Close(fd)
	}
	c.Unlink(spare)
	fd, err = c.Open(spare, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err == nil {
		err = c.Fstat(fd, &st)
		if err != nil {
			c.Close(fd)
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
func openedByNobodyElse(c filecall.Calls, fd int) bool {
	if err := c.Lease(fd, unix.F_WRLCK); err != nil {
		return false
	}
	c.Lease(fd, unix.F_UNLCK)
	return true
}

// fill makes the spare fd (as st describes it) hold exactly data with mode
// perm, synced: written over from the start and cut to its length. Its
// data and size are synced (fdatasync), not its times; its mode, when it
// had to change, too (fsync).
func fill(c filecall.Calls, fd int, st *syscall.Stat_t, data []byte, perm fs.FileMode) error {
	for off := 0; off < len(data); {
		n, err := c.Pwrite(fd, data[off:], int64(off))
		if err != nil {
			return err
		}
		off += n
	}
	if st.Size != int64(len(data)) {
		if err := c.Ftruncate(fd, int64(len(data))); err != nil {
			return err
		}
	}
	dataOnly := true
	if mode := uint32(perm.Perm()); st.Mode&0o7777 != mode {
		if err := c.Fchmod(fd, mode); err != nil {
			return err
		}
		dataOnly = false
	}
	return filecall.Sync(fd, dataOnly)
}
