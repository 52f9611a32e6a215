package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// A Follower reads the log of a state folder as it grows, for a reader
// that shows it and reads it again each time it changes (the window's
// Activity tab). Read parses every line of all four files each time (36 MB
// when full: most of a second of CPU); a Follower parses the whole log once
// and then only the lines appended since, until a file is rotated or
// replaced, when it reads everything again (once per 8–10 MB written).
// It is not safe for concurrent use: one goroutine calls Entries.
type Follower struct {
	dir   string
	files [len(files)]followed
	// entries are the log's entries, oldest first, as Read orders them;
	// groups[i] is the group (trail, noise) entries[i] came from, which
	// orders entries of the same time.
	entries []Entry
	groups  []uint8
	read    bool // entries hold a read of the log
	parsed  int  // lines parsed in all: what the tests measure
}

// followed is what a Follower read of one of the log's files.
type followed struct {
	info os.FileInfo // the file read (nil: none was there)
	off  int64       // bytes read: up to the end of its last whole line
}

// NewFollower returns a Follower of the log in the state folder dir; the
// first call of Entries reads it.
func NewFollower(dir string) *Follower { return &Follower{dir: dir} }

// group is the group of file i of files: the trail's two files, then
// the noise's. Entries of the same time are ordered by group, then as
// written.
func group(i int) uint8 {
	if files[i] == NoiseRotatedName || files[i] == NoiseName {
		return 1
	}
	return 0
}

// Entries returns every entry of the log, oldest first, as Read returns
// them, and whether they changed since the last call. The slice is shared
// with later calls, which never change what it holds: the caller must not
// change it either. A line still being written is read once it is whole.
func (f *Follower) Entries() (entries []Entry, changed bool, err error) {
	if f.read && !f.rotated() {
		before := len(f.entries)
		if err := f.readNew(); err == nil {
			return f.entries, len(f.entries) != before, nil
		}
		// A file changed under the read (rotated meanwhile): read all.
	}
	// A rotation in the middle of a read (after the rotated generation
	// was read, before the current file) leaves a read that is not the
	// log: read again, a few times at most.
	for range 3 {
		if err := f.readAll(); err != nil {
			f.read = false
			return nil, false, err
		}
		if !f.rotated() {
			break
		}
	}
	return f.entries, true, nil
}

// rotated reports whether a file read before is no longer at its path or
// is shorter than what was read, or whether a rotated generation appeared
// or changed: then what is kept is no longer the log.
func (f *Follower) rotated() bool {
	for i, name := range files {
		fi, err := os.Stat(filepath.Join(f.dir, name))
		was := f.files[i]
		switch {
		case err != nil:
			if was.info != nil {
				return true // gone
			}
		case was.info == nil:
			// A current file appears when its first line is written; a
			// rotated one, only by a rotation.
			if name == RotatedName || name == NoiseRotatedName {
				return true
			}
		case !os.SameFile(was.info, fi) || fi.Size() < was.off:
			return true
		}
	}
	return false
}

// readAll reads the whole log again.
func (f *Follower) readAll() error {
	f.files = [len(files)]followed{}
	entries, groups, err := f.readFiles(false)
	if err != nil {
		return err
	}
	// New slices: earlier callers keep theirs.
	f.entries, f.groups = sortLog(entries, groups)
	f.read = true
	return nil
}

// readNew appends what was written to the current files since the last
// read, in order.
func (f *Follower) readNew() error {
	// The rotated generations are unchanged: rotated checked them.
	fresh, groups, err := f.readFiles(true)
	if err != nil || len(fresh) == 0 {
		return err
	}
	f.merge(fresh, groups)
	return nil
}

// readFiles returns what was written to the log's files (the current
// ones only, with current) past what was read of each, in file order,
// and the group of each entry.
func (f *Follower) readFiles(current bool) (entries []Entry, groups []uint8, err error) {
	for i, name := range files {
		if current && (name == RotatedName || name == NoiseRotatedName) {
			continue
		}
		n := len(entries)
		if entries, err = f.appendNew(i, filepath.Join(f.dir, name), entries); err != nil {
			return nil, nil, err
		}
		groups = append(groups, slices.Repeat([]uint8{group(i)}, len(entries)-n)...)
	}
	return entries, groups, nil
}

// appendNew appends to out the entries of the whole lines of file i (at
// path) past what was read of it, and records how far it read. It fails
// when the file open is not the one read before: it was rotated meanwhile.
func (f *Follower) appendNew(i int, path string, out []Entry) ([]Entry, error) {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		if f.files[i].info != nil {
			return out, errRotated
		}
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("audit: %w", err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return out, fmt.Errorf("audit: %w", err)
	}
	was := f.files[i]
	if was.info != nil && (!os.SameFile(was.info, fi) || fi.Size() < was.off) {
		return out, errRotated
	}
	if fi.Size() == was.off {
		f.files[i].info = fi
		return out, nil
	}
	buf := make([]byte, fi.Size()-was.off)
	n, err := file.ReadAt(buf, was.off)
	if err != nil && !errors.Is(err, io.EOF) {
		return out, fmt.Errorf("audit: reading %s: %w", filepath.Base(path), err)
	}
	buf = buf[:n]
	whole := bytes.LastIndexByte(buf, '\n') + 1 // a line being written waits
	for line := range bytes.Lines(buf[:whole]) {
		f.parsed++
		var e Entry
		if json.Unmarshal(line, &e) == nil {
			out = append(out, e)
		}
	}
	f.files[i] = followed{info: fi, off: was.off + int64(whole)}
	return out, nil
}

// errRotated: a file changed under the read.
var errRotated = errors.New("audit: the log was rotated while read")

// sortLog returns entries (and their groups) in new slices, ordered as
// Read orders them: by time, then group, then as read.
func sortLog(entries []Entry, groups []uint8) ([]Entry, []uint8) {
	idx := make([]int, len(entries))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return compare(entries[a], groups[a], entries[b], groups[b]) })
	sorted, sortedGroups := make([]Entry, len(idx)), make([]uint8, len(idx))
	for i, j := range idx {
		sorted[i], sortedGroups[i] = entries[j], groups[j]
	}
	return sorted, sortedGroups
}

// compare orders two entries of the log by time, then group.
func compare(a Entry, ga uint8, b Entry, gb uint8) int {
	if c := a.Time.Compare(b.Time); c != 0 {
		return c
	}
	return int(ga) - int(gb)
}

// merge puts fresh entries (read after every entry kept, in file order)
// in their places. Most come after every entry kept: they are appended,
// which leaves what earlier callers hold as it was. An entry older than
// the newest kept (an attempt logged when the call it waited on ended)
// makes a new slice.
func (f *Follower) merge(fresh []Entry, groups []uint8) {
	sorted, sortedGroups := sortLog(fresh, groups)
	n := len(f.entries)
	if n == 0 || compare(f.entries[n-1], f.groups[n-1], sorted[0], sortedGroups[0]) <= 0 {
		f.entries = append(f.entries, sorted...)
		f.groups = append(f.groups, sortedGroups...)
		return
	}
	entries, gs := make([]Entry, 0, n+len(sorted)), make([]uint8, 0, n+len(sorted))
	i, j := 0, 0
	for i < n || j < len(sorted) {
		// A kept entry goes first on a tie: it was written first.
		if j == len(sorted) || (i < n && compare(f.entries[i], f.groups[i], sorted[j], sortedGroups[j]) <= 0) {
			entries, gs = append(entries, f.entries[i]), append(gs, f.groups[i])
			i++
		} else {
			entries, gs = append(entries, sorted[j]), append(gs, sortedGroups[j])
			j++
		}
	}
	f.entries, f.groups = entries, gs
}
