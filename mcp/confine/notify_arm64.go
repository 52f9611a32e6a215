//go:build linux

package confine

import "golang.org/x/sys/unix"

// pathCalls: see notify_amd64.go. arm64 has only the *at forms.
var pathCalls = map[uint32]callShape{
	unix.SYS_OPENAT:    {op: opOpen, dirfd: 0, path: 1, flags: 2, mode: 3},
	unix.SYS_OPENAT2:   {op: opOpen2, dirfd: 0, path: 1, flags: 2},
	unix.SYS_MKDIRAT:   {op: opMkdir, dirfd: 0, path: 1},
	unix.SYS_RENAMEAT2: {op: opRename, dirfd: 0, path: 1, dirfd2: 2, path2: 3},
	unix.SYS_EXECVE:    {op: opExec, path: 0, dirfd: -1},
	unix.SYS_EXECVEAT:  {op: opExec, dirfd: 0, path: 1},
}
