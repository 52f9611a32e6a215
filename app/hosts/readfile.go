package hosts

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MaxFileBytes bounds a host's config file: a larger one is not read. The
// largest real one reported is a ~/.claude.json of 238 MB, Claude Code's
// per-project prompt history, pasted logs and diffs included
// (anthropics/claude-code#5653; bench/bigclaude writes one like it); this
// leaves twice that room. `hosts list` of a 257 MiB one peaks at 1.4
// times the file's size.
const MaxFileBytes = 512 << 20

// refusedError is a host file Rootkeeper does not read: not a regular file
// (a named pipe would block the reader for ever, a device never ends), or
// larger than MaxFileBytes.
type refusedError struct {
	path   string // the path as the host names it
	target string // where its links lead, if elsewhere
	why    string
}

func (e *refusedError) Error() string {
	name := e.path
	if e.target != "" && e.target != e.path {
		name = fmt.Sprintf("%s (a link to %s)", e.path, e.target)
	}
	return fmt.Sprintf("%s %s; Rootkeeper does not read it", name, e.why)
}

// kindOf names what a file that is not a regular one is.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a folder"
	}
	return "not a regular file (" + m.Type().String() + ")"
}

// readHostFile reads a host's file as untrusted input: a regular file of
// at most limit bytes, or a *refusedError naming what it is. Nothing that
// is not a regular file is opened for reading in a way that can block: it
// is refused by its stat before being opened, and the file is opened
// without blocking (O_NONBLOCK where there is one) and checked again by
// fstat, so that one swapped in meanwhile is refused too. It is read
// through a limit: one that grew past limit since is refused, not read
// whole. A missing file gives an error matching fs.ErrNotExist.
func readHostFile(path string, limit int64) ([]byte, error) {
	refuse := func(why string) error {
		target := path
		if real, err := filepath.EvalSymlinks(path); err == nil {
			target = real
		}
		return &refusedError{path: path, target: target, why: why}
	}
	before, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, refuse("is " + kindOf(before.Mode()) + ", not a regular file")
	}
	if before.Size() > limit {
		return nil, refuse(tooLarge(before.Size(), limit))
	}
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	now, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !now.Mode().IsRegular() {
		return nil, refuse("is " + kindOf(now.Mode()) + ", not a regular file")
	}
	if !os.SameFile(before, now) {
		return nil, refuse("was replaced while being read")
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, refuse(tooLarge(int64(len(data)), limit))
	}
	return data, nil
}

// hostFileHolds reports whether the host's file at path holds exactly want,
// read as readHostFile reads (a regular file only, opened without
// blocking), a piece at a time: the check right before a big file is
// replaced costs no second copy of it.
func hostFileHolds(path string, want []byte) bool {
	before, err := os.Stat(path)
	if err != nil || !before.Mode().IsRegular() || before.Size() != int64(len(want)) {
		return false
	}
	f, err := openNonBlocking(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(before, now) {
		return false
	}
	buf := make([]byte, 64<<10)
	rest := want
	for {
		n, err := f.Read(buf)
		if n > len(rest) || !bytes.Equal(buf[:n], rest[:n]) {
			return false
		}
		rest = rest[n:]
		if err == io.EOF {
			return len(rest) == 0
		}
		if err != nil {
			return false
		}
	}
}

func tooLarge(size, limit int64) string {
	return fmt.Sprintf("is larger than %d MiB (%d MiB), more than any host's config file", limit>>20, size>>20)
}

// isRefused reports whether err says a host file was refused, and why.
func isRefused(err error) (string, bool) {
	var r *refusedError
	if errors.As(err, &r) {
		return r.Error(), true
	}
	return "", false
}
