//go:build linux

package filecall

import "golang.org/x/sys/unix"

// sysFstatat is the number of fstatat(2), which amd64 calls newfstatat.
const sysFstatat = unix.SYS_NEWFSTATAT
