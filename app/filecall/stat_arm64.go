//go:build linux

package filecall

import "golang.org/x/sys/unix"

// sysFstatat is the number of fstatat(2).
const sysFstatat = unix.SYS_FSTATAT
