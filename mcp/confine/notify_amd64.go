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
	// truncate(path, length) and inotify_add_watch(fd, path, mask), whose
	// paths are relative to the working folder: see watch_linux.go.
	unix.SYS_TRUNCATE:          {op: opTruncate, path: 0, dirfd: -1},
	unix.SYS_INOTIFY_ADD_WATCH: {op: opWatch, path: 1, flags: 2, dirfd: -1},
	// Calls Landlock decides, which the observer does itself only in a
	// folder granted while the server runs (grant_linux.go).
	unix.SYS_UNLINK:    {op: opUnlink, path: 0, dirfd: -1},
	unix.SYS_UNLINKAT:  {op: opUnlink, dirfd: 0, path: 1, flags: 2},
	unix.SYS_RMDIR:     {op: opRmdir, path: 0, dirfd: -1},
	unix.SYS_SYMLINK:   {op: opSymlink, path: 1, dirfd: -1},
	unix.SYS_SYMLINKAT: {op: opSymlink, dirfd: 1, path: 2},
	unix.SYS_LINK:      {op: opLink, path: 0, dirfd: -1, path2: 1, dirfd2: -1},
	unix.SYS_LINKAT:    {op: opLink, dirfd: 0, path: 1, dirfd2: 2, path2: 3},
}

// metaCalls are the system calls that change a file's mode, owner,
// extended attributes or times, which Landlock does not govern (see
// meta_linux.go), with where their arguments are.
var metaCalls = map[uint32]metaShape{
	unix.SYS_CHMOD:        {kind: metaMode, fd: -1, path: 0, flags: -1, arg: 1},
	unix.SYS_FCHMOD:       {kind: metaMode, fd: 0, path: -1, flags: -1, arg: 1},
	unix.SYS_FCHMODAT:     {kind: metaMode, fd: 0, path: 1, flags: -1, arg: 2},
	unix.SYS_FCHMODAT2:    {kind: metaMode, fd: 0, path: 1, flags: 3, arg: 2},
	unix.SYS_CHOWN:        {kind: metaOwner, fd: -1, path: 0, flags: -1, arg: 1},
	unix.SYS_FCHOWN:       {kind: metaOwner, fd: 0, path: -1, flags: -1, arg: 1},
	unix.SYS_LCHOWN:       {kind: metaOwner, fd: -1, path: 0, flags: -1, nofollow: true, arg: 1},
	unix.SYS_FCHOWNAT:     {kind: metaOwner, fd: 0, path: 1, flags: 4, arg: 2},
	unix.SYS_SETXATTR:     {kind: metaXattrSet, fd: -1, path: 0, flags: -1, arg: 1},
	unix.SYS_LSETXATTR:    {kind: metaXattrSet, fd: -1, path: 0, flags: -1, nofollow: true, arg: 1},
	unix.SYS_FSETXATTR:    {kind: metaXattrSet, fd: 0, path: -1, flags: -1, arg: 1},
	unix.SYS_REMOVEXATTR:  {kind: metaXattrRemove, fd: -1, path: 0, flags: -1, arg: 1},
	unix.SYS_LREMOVEXATTR: {kind: metaXattrRemove, fd: -1, path: 0, flags: -1, nofollow: true, arg: 1},
	unix.SYS_FREMOVEXATTR: {kind: metaXattrRemove, fd: 0, path: -1, flags: -1, arg: 1},
	unix.SYS_UTIME:        {kind: metaTimes, fd: -1, path: 0, flags: -1, arg: 1, times: timesUtimbuf},
	unix.SYS_UTIMES:       {kind: metaTimes, fd: -1, path: 0, flags: -1, arg: 1, times: timesTimeval},
	unix.SYS_FUTIMESAT:    {kind: metaTimes, fd: 0, path: 1, flags: -1, arg: 2, times: timesTimeval},
	unix.SYS_UTIMENSAT:    {kind: metaTimes, fd: 0, path: 1, flags: 3, arg: 2, times: timesTimespec},
}
