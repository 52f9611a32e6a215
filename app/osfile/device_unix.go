//go:build unix

package osfile

import (
	"os"
	"syscall"
)

// DeviceOf returns the device a file is on, so that a root whose drive was
// unmounted or replaced is noticed.
func DeviceOf(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true //nolint:unconvert // Dev is int32 on some platforms
}

// OwnerOf returns the user id owning a file.
func OwnerOf(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// WritableByOthers reports whether the group or others may write to the
// file, by its mode bits.
func WritableByOthers(fi os.FileInfo) bool { return fi.Mode().Perm()&0o022 != 0 }
