package audit

import "syscall"

// fstatat is the number of fstatat(2), which amd64 calls newfstatat.
const fstatat = syscall.SYS_NEWFSTATAT
