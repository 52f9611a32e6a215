//go:build unix

package detect

import (
	"errors"
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

// isNotDirOrLoop says whether err means a path is no longer a folder (it was
// replaced by a file or a symbolic link, which O_NOFOLLOW refuses).
func isNotDirOrLoop(err error) bool {
	return errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP)
}
