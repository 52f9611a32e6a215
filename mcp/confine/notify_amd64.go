//go:build linux

package confine

import "golang.org/x/sys/unix"

// pathCalls are the system calls that name a path a confined server opens,
// creates, lists, renames or executes, with where their path arguments
// are (see pathArgs).
var pathCalls = map[uint32]callShape{
	unix.SYS_OPEN:      {op: opOpen, path: 0, flags: 1, mode: 2, dirfd: -1},
	unix.SYS_CREAT:     {op: opCreat, path: 0, mode: 1, dirfd: -1},
	unix.SYS_MKDIR:     {op: opMkdir, path: 0, dirfd: -1},
	unix.SYS_RENAME:    {op: opRename, path: 0, path2: 1, dirfd: -1, dirfd2: -1},
	unix.SYS_EXECVE:    {op: opExec, path: 0, dirfd: -1},
	unix.SYS_OPENAT:    {op: opOpen, dirfd: 0, path: 1, flags: 2, mode: 3},
	unix.SYS_OPENAT2:   {op: opOpen2, dirfd: 0, path: 1, flags: 2},
	unix.SYS_MKDIRAT:   {op: opMkdir, dirfd: 0, path: 1},
	unix.SYS_RENAMEAT:  {op: opRename, dirfd: 0, path: 1, dirfd2: 2, path2: 3},
	unix.SYS_RENAMEAT2: {op: opRename, dirfd: 0, path: 1, dirfd2: 2, path2: 3},
	unix.SYS_EXECVEAT:  {op: opExec, dirfd: 0, path: 1},
}
