package audit

import "syscall"

// fstatat is the number of fstatat(2).
const fstatat = syscall.SYS_FSTATAT
