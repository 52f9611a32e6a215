//go:build !unix

package detect

import (
	"errors"
	"os"
	"syscall"
)

func deviceOf(os.FileInfo) (uint64, bool) { return 0, false }

func isNotDirOrLoop(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
