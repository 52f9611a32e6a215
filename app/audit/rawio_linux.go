//go:build linux && (amd64 || arm64)

package audit

import (
	"io/fs"
	"os"
	"syscall"

	"rootkeeper/app/filecall"
)

// writeAll writes p to f with package filecall's calls (see rotating):
// raw where the log's folder is on a local disk.
func writeAll(f *os.File, p []byte) error {
	c, fd := filecall.For(f.Name()), int(f.Fd())
	for len(p) > 0 {
		n, err := c.Write(fd, p)
		if err != nil {
			return &fs.PathError{Op: "write", Path: f.Name(), Err: err}
		}
		p = p[n:]
	}
	return nil
}

// statSame is the size of the file at path and whether it is the file id
// describes (the same device and inode), by package filecall's stat (see
// rotating).
func statSame(path string, id os.FileInfo) (size int64, same bool, err error) {
	var st syscall.Stat_t
	if err := filecall.For(path).Stat(path, &st); err != nil {
		return 0, false, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	was, ok := id.Sys().(*syscall.Stat_t)
	return st.Size, ok && was.Dev == st.Dev && was.Ino == st.Ino, nil
}
