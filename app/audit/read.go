package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// files are the log's files, each rotated generation before its current
// file.
var files = []string{RotatedName, FileName, NoiseRotatedName, NoiseName}

// Read returns the entries in dir, trail and noise merged, oldest first
// (entries of the same time in the order written, the trail's first). A
// non-empty server keeps only that server's entries. Lines that cannot be
// parsed (a write cut short by a crash) are skipped. A folder with no log
// is no entries, not an error.
func Read(dir, server string) ([]Entry, error) {
	var out []Entry
	for _, name := range files {
		var err error
		if out, err = readFile(filepath.Join(dir, name), server, out); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(out, func(a, b Entry) int { return a.Time.Compare(b.Time) })
	return out, nil
}

// readFile appends the entries of server (all for "") in the file at path
// to out.
func readFile(path, server string, out []Entry) ([]Entry, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if server == "" || e.Server == server {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("audit: reading %s: %w", filepath.Base(path), err)
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
