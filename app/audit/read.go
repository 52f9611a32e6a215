package audit

import (
	"os"
	"path/filepath"
)

// files are the log's files, each rotated generation before its current
// file.
var files = [...]string{RotatedName, FileName, NoiseRotatedName, NoiseName}

// Read returns the entries in dir, trail and noise merged, oldest first
// (entries of the same time in the order written, the trail's first). A
// non-empty server keeps only that server's entries. Lines that cannot be
// parsed (a write cut short by a crash) are skipped, and a last line not
// yet whole is left for a later read. A folder with no log is no entries,
// not an error.
func Read(dir, server string) ([]Entry, error) {
	all, _, err := NewFollower(dir).Entries()
	if err != nil || server == "" {
		return all, err
	}
	var out []Entry
	for _, e := range all {
		if e.Server == server {
			out = append(out, e)
		}
	}
	return out, nil
}

// Stamp says, cheaply, which version of the log is in dir: the size and
// modification time of each of its files. Readers compare stamps to read
// the log again only when it changed.
type Stamp [2 * 4]int64

// StampOf stats the log's files in dir.
func StampOf(dir string) Stamp {
	var s Stamp
	for i, name := range files {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			s[2*i], s[2*i+1] = fi.Size(), fi.ModTime().UnixNano()
		}
	}
	return s
}
