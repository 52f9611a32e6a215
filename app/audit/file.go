package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// rotating is one of the log's files and its one rotated generation
// (path + ".1"). Other processes (the app, each bridge) append to the same
// path and rotate it too, so before each write the writer checks that its
// descriptor is still the file at path and how big that file really is:
// one stat of the path, compared with what the descriptor was when it was
// opened. Lines are queued (pending, under Log.mu) and written by one
// writer at a time, as many as are queued in one write (Log.commit): a
// grant to fifty servers wrote fifty lines, each after a stat of its own.
type rotating struct {
	path    string
	pending []byte // lines queued and not yet written; Log.mu guards it
	spare   []byte // the last batch's buffer, reused for the next
	// f and id belong to the one writer (Log.writing).
	f  *os.File
	id os.FileInfo // f when it was opened: its device and inode
}

// The writes and the stat of the path are package filecall's calls
// (rawio_linux.go): raw on Linux where the log's folder is on a local
// disk, as Rootkeeper's pipes are (mcp/rawio). A call through the
// scheduler's system call path wakes the runtime's monitor thread
// (sysmon) from its sleep, after which it polls every 20 µs for a while.
// The trail's writes and stats, a few each grant, woke it again and
// again: at fifty servers the monitor cost 0.47 ms of CPU a grant, 0.34 ms
// without them (sysmon-ms, BenchmarkGrantToServer). Each call returns at
// once (an append to the page cache, a stat) and one goroutine makes them
// at a time (Log.commit): one held up by the disk holds one P at most.

// queue adds e's line to what the next write writes; Log.mu is held.
func (r *rotating) queue(e Entry) error {
	line, err := appendEntry(r.pending, e)
	if err != nil {
		return err
	}
	r.pending = append(line, '\n')
	return nil
}

// take returns the lines queued and leaves an empty queue; Log.mu is held.
func (r *rotating) take() []byte {
	batch := r.pending
	r.pending, r.spare = r.spare[:0], nil
	return batch
}

// done gives back the buffer of a batch written; Log.mu is held.
func (r *rotating) done(batch []byte) {
	if cap(batch) <= 64<<10 {
		r.spare = batch[:0]
	}
}

// write writes batch (whole lines) in as few writes as the size limit
// allows: the file is rotated first whenever the next line would take it
// past max, as if each line were written alone. Only the log's one writer
// calls it.
func (r *rotating) write(batch []byte, max int64) error {
	if len(batch) == 0 {
		return nil
	}
	size, err := r.current()
	for err == nil && len(batch) > 0 {
		n := fit(batch, max-size)
		if n == 0 {
			first := bytes.IndexByte(batch, '\n') + 1
			if size > 0 {
				// Not even the next line fits: rotate, then write it
				// whatever the new file holds (as a line longer than max
				// goes alone into a new file).
				if err = r.rotate(int64(first), max); err == nil {
					size, err = r.current()
				}
				if err != nil {
					break
				}
			}
			n = first
		}
		if werr := writeAll(r.f, batch[:n]); werr != nil {
			return fmt.Errorf("audit: writing %s: %w", r.path, werr)
		}
		size += int64(n)
		batch = batch[n:]
	}
	return err
}

// fit is how many bytes of batch's first whole lines fit in room.
func fit(batch []byte, room int64) int {
	if int64(len(batch)) <= room {
		return len(batch)
	}
	n := 0
	for n < len(batch) {
		end := bytes.IndexByte(batch[n:], '\n') + 1
		if int64(n+end) > room {
			break
		}
		n += end
	}
	return n
}

// current opens the file at path (again, when another process rotated the
// one open) and returns its size.
func (r *rotating) current() (int64, error) {
	if err := r.open(); err != nil {
		return 0, err
	}
	size, current, err := r.stat()
	if err == nil && !current {
		// Another process rotated it: the file at path is the one to write.
		r.close()
		if err = r.open(); err == nil {
			size, _, err = r.stat()
		}
	}
	return size, err
}

// stat is the size of the open file and whether it is still the file at
// path (when it is not, the size does not matter: the file at path is
// opened instead).
func (r *rotating) stat() (size int64, current bool, err error) {
	size, current, err = statSame(r.path, r.id)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("audit: %w", err)
	}
	return size, current, nil
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
