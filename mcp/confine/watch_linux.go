package confine

// Two path calls that Landlock does not govern (or not at every ABI), which
// the observer therefore does itself, on exactly the file it checked, as it
// does a file's metadata (meta_linux.go):
//
//   - inotify_add_watch: a watch on a folder tells the name of every file
//     saved in it, and Landlock has no say over watches at any ABI. A
//     server may watch what it may read; a watch past its folders is asked
//     about (it cannot be allowed once: a watch goes on telling) and
//     refused, never let go on.
//   - truncate(path) below Landlock ABI 3, which has no truncate right:
//     the observer empties the file only in the server's read-write
//     folders, and refuses elsewhere. From ABI 3 Landlock decides, as for
//     any path call.
//
// The path is read from the server's memory, opened O_PATH as the kernel
// would resolve it for the server (openAs), and the place the kernel gives
// that descriptor is what is checked; the watch is then added, or the file
// emptied, through that descriptor, so that another thread of the server
// changing the path or a link in between changes nothing.

import (
	"rootkeeper/app"
	"strconv"

	"golang.org/x/sys/unix"
)

// notWatched is Attempt.Why for a watch: why allow once cannot answer it.
const notWatched = "a watch goes on telling what is saved there; only allowing the folder lets it watch"

// answerWatch answers an inotify_add_watch of the server, or returns the
// attempt to ask about (ask) when it names a place past its folders.
func (o *Observer) answerWatch(fd int, n *seccompNotif) (a Attempt, ask bool) {
	shape := pathCalls[uint32(n.nr)]
	pid := int(n.pid)
	mask := uint32(n.args[shape.flags])
	name, err := readString(pid, uintptr(n.args[shape.path]))
	if err != nil {
		o.answer(fd, n.id, errnoOf(err))
		return Attempt{}, false
	}
	obj, err := openAs(pid, unix.AT_FDCWD, name, mask&unix.IN_DONT_FOLLOW != 0)
	if err != nil {
		o.answer(fd, n.id, errnoOf(err))
		return Attempt{}, false
	}
	defer unix.Close(obj)
	if !o.stillWaiting(fd, n.id) {
		return Attempt{}, false
	}
	where := location(obj)
	if where == "" || !o.readableAt(where) || o.protected(where) {
		abs, ok := absolute(pid, unix.AT_FDCWD, name)
		if !ok {
			abs = where
		}
		return Attempt{PID: pid, Op: "watch", Path: abs, Why: notWatched, refuse: unix.EACCES}, true
	}
	var st unix.Stat_t
	if err := unix.Fstat(obj, &st); err != nil {
		o.answer(fd, n.id, errnoOf(err))
		return Attempt{}, false
	}
	if mask&unix.IN_ONLYDIR != 0 && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		o.answer(fd, n.id, unix.ENOTDIR)
		return Attempt{}, false
	}
	ino, err := serverFile(pid, int(int32(n.args[0])))
	if err != nil {
		o.answer(fd, n.id, errnoOf(err))
		return Attempt{}, false
	}
	defer unix.Close(ino)
	// The descriptor is followed to what was checked; IN_DONT_FOLLOW was
	// honoured when it was opened (a watch on the link itself).
	wd, err := unix.InotifyAddWatch(ino, "/proc/self/fd/"+strconv.Itoa(obj), mask&^unix.IN_DONT_FOLLOW)
	if err != nil {
		o.answer(fd, n.id, errnoOf(err))
		return Attempt{}, false
	}
	o.answerValue(fd, n.id, int64(wd))
	return Attempt{}, false
}

// answerTruncate answers a truncate(path, length) of the server, or
// returns the attempt to ask about (ask) when it names a place past its
// folders. From ABI 3 a truncate in its folders goes on to Landlock.
func (o *Observer) answerTruncate(fd int, n *seccompNotif) (a Attempt, ask bool) {
	pid := int(n.pid)
	name, err := readString(pid, uintptr(n.args[0]))
	if err != nil {
		o.answer(fd, n.id, errnoOf(err))
		return Attempt{}, false
	}
	abs, absOK := absolute(pid, unix.AT_FDCWD, name)
	const why = "a file is emptied by its name only where the server may write"
	if o.abi >= 3 && !(absOK && o.grantedAt(abs) != "") {
		if absOK && o.covered(abs) {
			o.cont(fd, n.id) // Landlock decides
			return Attempt{}, false
		}
		if !o.stillWaiting(fd, n.id) {
			return Attempt{}, false
		}
		return Attempt{PID: pid, Op: "truncate", Path: abs, Why: why}, absOK
	}
	obj, err := openAs(pid, unix.AT_FDCWD, name, false)
	if err != nil {
		o.answer(fd, n.id, errnoOf(err))
		return Attempt{}, false
	}
	defer unix.Close(obj)
	if !o.stillWaiting(fd, n.id) {
		return Attempt{}, false
	}
	where := location(obj)
	switch {
	case where != "" && o.writableAt(where) && !o.protected(where):
		o.answer(fd, n.id, truncateFile(obj, int64(n.args[1])))
	case where != "" && o.readableAt(where):
		o.answer(fd, n.id, unix.EACCES) // it may read there, not write
	default:
		if !absOK {
			abs = where
		}
		return Attempt{PID: pid, Op: "truncate", Path: abs, Why: why, refuse: unix.EACCES}, true
	}
	return Attempt{}, false
}

// truncateFile empties (or cuts to length) the regular file Rootkeeper's
// O_PATH descriptor obj is on, through a descriptor opened for writing
// from it (never blocking: not a FIFO's open), and returns the errno.
func truncateFile(obj int, length int64) unix.Errno {
	var st unix.Stat_t
	if err := unix.Fstat(obj, &st); err != nil {
		return errnoOf(err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		return unix.EISDIR
	default:
		return unix.EINVAL
	}
	w, err := unix.Open("/proc/self/fd/"+strconv.Itoa(obj), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(w)
	return errnoOf(unix.Ftruncate(w, length))
}

// readableAt reports whether path is beneath a folder (or is a file) the
// server may read: its ruleset's read and read-write rules and the
// folders granted since it started, not the folders it may only list.
func (o *Observer) readableAt(path string) bool {
	if o.grantedAt(path) != "" {
		return true
	}
	for _, p := range o.allowed {
		if app.IsWithin(path, p) {
			return true
		}
	}
	return false
}
