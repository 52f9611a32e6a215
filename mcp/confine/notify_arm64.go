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
	// truncate(path, length) and inotify_add_watch(fd, path, mask), whose
	// paths are relative to the working folder: see watch_linux.go.
	unix.SYS_TRUNCATE:          {op: opTruncate, path: 0, dirfd: -1},
	unix.SYS_INOTIFY_ADD_WATCH: {op: opWatch, path: 1, flags: 2, dirfd: -1},
	// Calls Landlock decides, which the observer does itself only in a
	// folder granted while the server runs (grant_linux.go).
	unix.SYS_UNLINKAT:  {op: opUnlink, dirfd: 0, path: 1, flags: 2},
	unix.SYS_SYMLINKAT: {op: opSymlink, dirfd: 1, path: 2},
	unix.SYS_LINKAT:    {op: opLink, dirfd: 0, path: 1, dirfd2: 2, path2: 3},
}

// metaCalls: see notify_amd64.go. arm64 has only the *at and f* forms.
var metaCalls = map[uint32]metaShape{
	unix.SYS_FCHMOD:       {kind: metaMode, fd: 0, path: -1, flags: -1, arg: 1},
	unix.SYS_FCHMODAT:     {kind: metaMode, fd: 0, path: 1, flags: -1, arg: 2},
	unix.SYS_FCHMODAT2:    {kind: metaMode, fd: 0, path: 1, flags: 3, arg: 2},
	unix.SYS_FCHOWN:       {kind: metaOwner, fd: 0, path: -1, flags: -1, arg: 1},
	unix.SYS_FCHOWNAT:     {kind: metaOwner, fd: 0, path: 1, flags: 4, arg: 2},
	unix.SYS_SETXATTR:     {kind: metaXattrSet, fd: -1, path: 0, flags: -1, arg: 1},
	unix.SYS_LSETXATTR:    {kind: metaXattrSet, fd: -1, path: 0, flags: -1, nofollow: true, arg: 1},
	unix.SYS_FSETXATTR:    {kind: metaXattrSet, fd: 0, path: -1, flags: -1, arg: 1},
	unix.SYS_REMOVEXATTR:  {kind: metaXattrRemove, fd: -1, path: 0, flags: -1, arg: 1},
	unix.SYS_LREMOVEXATTR: {kind: metaXattrRemove, fd: -1, path: 0, flags: -1, nofollow: true, arg: 1},
	unix.SYS_FREMOVEXATTR: {kind: metaXattrRemove, fd: 0, path: -1, flags: -1, arg: 1},
	unix.SYS_UTIMENSAT:    {kind: metaTimes, fd: 0, path: 1, flags: 3, arg: 2, times: timesTimespec},
}
