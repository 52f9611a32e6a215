//go:build !linux

package detect

import (
	"io"
	"io/fs"
	"os"
)

// dir is an open folder.
type dir struct{ f *os.File }

// dirRef would let sub-folders be opened relative to their parent; here
// they are opened by path, so it is always nil.
type dirRef struct{}

func (r *dirRef) release() {}

func (r *dirRef) hold(int) {}

// openDir opens the folder at path.
func openDir(_ *dirRef, path string, _ int) (dir, error) {
	f, err := os.Open(path)
	return dir{f}, err
}

func (d dir) share(int) *dirRef { d.close(); return nil }

func (d dir) close() { d.f.Close() }

// list calls fn with the name and type of every entry. dev is the folder's
// device where the platform has one (else 0), for the walk to notice other
// file systems.
func (d dir) list(_ []byte, _ bool, fn func(name []byte, typ entryType)) (dev uint64, err error) {
	fi, err := d.f.Stat()
	if err != nil {
		return 0, err
	}
	if !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
		return 0, &fs.PathError{Op: "open", Path: d.f.Name(), Err: errNotDir}
	}
	dev, _ = deviceOf(fi)
	for {
		ents, err := d.f.ReadDir(256)
		for _, e := range ents {
			t := typeOther
			switch m := e.Type(); {
			case m.IsDir():
				t = typeDir
			case m.IsRegular():
				t = typeFile
			case m&fs.ModeSymlink != 0:
				t = typeSymlink
			}
			fn([]byte(e.Name()), t)
		}
		if err == io.EOF || (err == nil && len(ents) == 0) {
			return dev, nil
		}
		if err != nil {
			return dev, err
		}
	}
}

// mountPoints is unknown here; list's dev keeps the walk on one file system
// instead.
func mountPoints() (map[string]uint64, bool) { return nil, false }

// readFile returns the contents of a small file (HEAD, a gitdir file, a git
// config).
//
// Anything but a regular file (a FIFO, whose open would block the scan) is
// refused before it is opened.
func readFile(path string) ([]byte, error) {
	if fi, err := os.Lstat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errNotRegular}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfig+1))
	if err == nil && len(data) > maxConfig {
		err = &fs.PathError{Op: "read", Path: path, Err: errTooLarge}
	}
	return data, err
}

// hasEndMark is false: list reads every folder to the end.
func hasEndMark(string) bool { return false }

// statDir would stat a folder for the re-scan cache; here the cache is
// never trusted, so every folder is read.
func statDir(*dirRef, string, int) (stamp, bool) { return stamp{}, false }

// stamp would be the stat of d for the re-scan cache; see statDir.
func (d dir) stamp() (stamp, bool) { return stamp{}, false }

// openPath would open a folder for its stamp; see statDir.
func openPath(*dirRef, string, int) (dir, stamp, bool) { return dir{}, stamp{}, false }
