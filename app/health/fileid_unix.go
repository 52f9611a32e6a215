//go:build unix

package health

import (
	"os"
	"syscall"
)

// fileID is a folder's identity (device and inode), which survives a rename.
type fileID struct{ dev, ino uint64 }

// idOf returns the identity of the file at path, following symlinks.
func idOf(path string) (fileID, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true //nolint:unconvert // types differ by platform
}
