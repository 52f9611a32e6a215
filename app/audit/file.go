package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// rotating is one of the log's files and its one rotated generation
// (path + ".1"). Other processes (the app, each bridge) append to the same
// path and rotate it too, so before each line the writer checks that its
// descriptor is still the file at path and how big that file really is:
// one stat of the path, compared with what the descriptor was when it was
// opened (a grant to fifty servers writes fifty lines at once, and an
// fstat more for each was a third of their system calls).
type rotating struct {
	path string
	f    *os.File
	id   os.FileInfo // f when it was opened: its device and inode
}

// append writes e as one line, rotating first when the line would take
// the file past max; l.mu is held.
func (r *rotating) append(e Entry, max int64) error {
	line, err := encode(e)
	if err != nil {
		return err
	}
	if err := r.open(); err != nil {
		return err
	}
	size, current, err := r.stat()
	if err == nil && !current {
		// Another process rotated it: the file at path is the one to write.
		r.close()
		if err = r.open(); err == nil {
			size, _, err = r.stat()
		}
	}
	if err != nil {
		return err
	}
	if size > 0 && size+int64(len(line)) > max {
		if err := r.rotate(int64(len(line)), max); err != nil {
			return err
		}
	}
	if _, err := r.f.Write(line); err != nil {
		return fmt.Errorf("audit: writing %s: %w", r.path, err)
	}
	return nil
}

// stat is the size of the open file and whether it is still the file at
// path (when it is not, the size does not matter: the file at path is
// opened instead).
func (r *rotating) stat() (size int64, current bool, err error) {
	pi, err := os.Stat(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("audit: %w", err)
	}
	return pi.Size(), os.SameFile(r.id, pi), nil
}

// rotate moves the file to path.1 (replacing it) and opens a new one,
// unless another process did so first: the check and the rename are made
// holding a lock on the file itself, which a process that rotated second
// would find no longer at path.
func (r *rotating) rotate(need, max int64) error {
	if err := lockFile(r.f); err != nil {
		return fmt.Errorf("audit: locking %s: %w", r.path, err)
	}
	size, current, err := r.stat()
	if err == nil && current && size+need > max {
		if rerr := os.Rename(r.path, r.path+".1"); rerr != nil {
			err = fmt.Errorf("audit: rotating: %w", rerr)
		}
	}
	r.close() // and the lock with it
	return errors.Join(err, r.open())
}

// open opens the file if it is not open.
func (r *rotating) open() error {
	if r.f != nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	id, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit: %w", err)
	}
	r.f, r.id = f, id
	return nil
}

// close closes the file if it is open.
func (r *rotating) close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
