//go:build unix

package app

import (
	"os"
	"syscall"
)

func deviceOf(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true //nolint:unconvert // Dev is int32 on some platforms
}

// ownerOf returns the user id owning a file.
func ownerOf(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// writableByOthers reports whether the group or others may write to the
// file, by its mode bits.
func writableByOthers(fi os.FileInfo) bool { return fi.Mode().Perm()&0o022 != 0 }
