//go:build !unix

package osfile

import (
	"fmt"
	"io/fs"
	"os"
)

// OpenNoWait opens path for reading. Where O_NONBLOCK does not exist, a path
// that is neither a regular file nor a folder is refused before it is
// opened, so that a pipe or device cannot block the caller.
func OpenNoWait(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("not a regular file or folder")}
	}
	return os.Open(path)
}
