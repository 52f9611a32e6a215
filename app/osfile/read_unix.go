//go:build unix

package osfile

import (
	"io/fs"
	"syscall"

	"rootkeeper/app/filecall"
)

// ReadFile is os.ReadFile read through a bare descriptor (see WithLock):
// open, fstat for the size, the reads, close (package filecall's calls).
// Its errors are those of os.ReadFile (a *fs.PathError; errors.Is(err,
// fs.ErrNotExist) for a missing file).
func ReadFile(path string) ([]byte, error) { return ReadFileInto(path, nil) }

// ReadFileInto is ReadFile reading into buf's room when it has enough (a
// buffer the caller reuses), into a new one otherwise.
func ReadFileInto(path string, buf []byte) ([]byte, error) {
	c := filecall.For(path)
	// Not waiting in open(2) for a FIFO put where the file was (the open
	// may be raw: it would hold its P); a regular file's reads ignore it.
	fd, err := c.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer c.Close(fd)
	size := 0
	var st syscall.Stat_t
	if c.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Size > 0 && int64(int(st.Size)) == st.Size {
		size = int(st.Size)
	}
	size++ // one byte more, so that the end is seen in the same read
	if size < 512 {
		size = 512
	}
	data := buf[:0]
	if cap(data) < size {
		// Room to spare, for a buffer read into again: a file that
		// grows a little still fits.
		data = make([]byte, 0, size+size/4)
	}
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := c.Read(fd, data[len(data):cap(data)])
		switch {
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return data, nil
		}
		data = data[:len(data)+n]
	}
}

// Names lists the names in the folder dir, in no particular order, read
// through a bare descriptor (see WithLock).
func Names(dir string) ([]string, error) {
	c := filecall.In(dir)
	fd, err := c.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer c.Close(fd)
	var names []string
	buf := make([]byte, 8192)
	for {
		n, err := c.Getdents(fd, buf)
		if err != nil {
			return names, &fs.PathError{Op: "readdirent", Path: dir, Err: err}
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
}
