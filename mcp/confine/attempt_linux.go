package confine

// What a path call of a confined server attempts (attempt: its path made
// absolute, what it does, whether a descriptor can answer it), whether the
// ruleset covers it, and handing it the descriptor Rootkeeper opens itself
// beneath the folder allowed (hand).

import (
	"fmt"
	"os"
	"path/filepath"
	"rootkeeper/app"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openHow is what an open asked for.
type openHow struct {
	flags   uint64
	mode    uint64
	resolve uint64 // openat2's resolve flags
}

// openOp is what an open with flags does to the path, which exists or
// not: replace (create, emptying what is there), truncate (emptying it,
// whatever the access asked: Linux empties a file opened O_RDONLY|O_TRUNC
// too), create (a file that is not there), write (for writing, keeping
// its content), list (O_DIRECTORY) or read.
func openOp(flags uint64, exists bool) string {
	write := flags&(unix.O_WRONLY|unix.O_RDWR) != 0
	switch {
	case flags&unix.O_TRUNC != 0 && flags&unix.O_CREAT != 0 && exists:
		return "replace"
	case flags&unix.O_TRUNC != 0 && (exists || flags&unix.O_CREAT == 0):
		return "truncate"
	case flags&unix.O_CREAT != 0 && !exists:
		return "create"
	case write:
		return "write"
	case flags&unix.O_DIRECTORY != 0:
		return "list"
	}
	return "read"
}

// honoured are the openat2 resolve flags a handed open keeps: Rootkeeper
// opens beneath the folder following no symlink at all, which is as strict
// as each of these or stricter (RESOLVE_NO_XDEV is added to its own;
// RESOLVE_CACHED only asks the kernel not to wait for the disk).
const honoured = unix.RESOLVE_NO_XDEV | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH | resolveCached

// resolveCached is RESOLVE_CACHED (Linux 5.12), which x/sys does not name.
const resolveCached = 0x20

// unhonoured says why an openat2 with resolve cannot be handed a
// descriptor, "" when it can: RESOLVE_IN_ROOT (and any flag this package
// does not know) resolves the path differently from the one shown.
func unhonoured(resolve uint64) string {
	if resolve&^honoured != 0 {
		return fmt.Sprintf("it asks the kernel to resolve its path in a way Rootkeeper cannot repeat (openat2 resolve flags %#x)", resolve&^honoured)
	}
	return ""
}

// attempt reads the notification's path; ok is false for a path the
// ruleset covers (or one that cannot be read), which is let go on at once.
func (o *Observer) attempt(fd int, n *seccompNotif) (Attempt, openHow, bool) {
	shape, known := pathCalls[uint32(n.nr)]
	if !known {
		return Attempt{}, openHow{}, false
	}
	pid := int(n.pid)
	var how openHow
	if changesNames(shape.op) {
		a := o.changeName(fd, n, shape)
		return a, how, a.Path != "" && !a.answered
	}
	outside, own := o.pathOutside(n, shape)
	if own.own {
		return own, how, true
	}
	if outside == "" {
		return Attempt{}, how, false
	}
	// What was read is the caller's only if it is still waiting.
	id := n.id
	if quickIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) != nil {
		return Attempt{}, how, false
	}
	a := Attempt{PID: pid, Path: outside}
	how, ok := describeOpen(&a, n, shape)
	if !ok {
		return Attempt{}, how, false
	}
	a.CanHand = a.Why == ""
	if a.CanHand && (shape.op == opOpen || shape.op == opOpen2 || shape.op == opCreat) && o.handGranted(fd, n.id, a, how) {
		a.answered = true
	}
	a.absent = !a.answered && absent(a)
	return a, how, true
}

// absent reports whether attempt a cannot become a question, as
// mcp.ReachWatch's worthAsking decides: its call does not make the path
// (a read, list, write, truncate or exec), and nothing is there, not even
// a dangling symlink.
func absent(a Attempt) bool {
	switch a.Op {
	case app.OpCreate, app.OpReplace, app.OpMkdir, app.OpRename:
		return false
	}
	_, err := os.Lstat(a.Path)
	return err != nil
}

// pathOutside is the first path the call names that its ruleset does not
// cover, as an absolute path ("" if none); or, for an open of the server's
// own /proc entries, the attempt that hands them (own set).
func (o *Observer) pathOutside(n *seccompNotif, shape callShape) (string, Attempt) {
	pid := int(n.pid)
	paths := [][2]int{{shape.dirfd, shape.path}}
	if shape.path2 != 0 {
		paths = append(paths, [2]int{shape.dirfd2, shape.path2})
	}
	for _, p := range paths {
		name, err := readString(pid, uintptr(n.args[p[1]]))
		if err != nil || name == "" {
			continue
		}
		dirfd := int32(unix.AT_FDCWD)
		if p[0] >= 0 {
			dirfd = int32(n.args[p[0]])
		}
		abs, ok := absolute(pid, dirfd, name)
		if !ok {
			continue
		}
		if (shape.op == opOpen || shape.op == opOpen2) && p[1] == shape.path && app.IsWithin(abs, "/proc") {
			if dir, rest, ok := o.ownProc(pid, abs); ok {
				return "", Attempt{PID: pid, Path: dir, rest: rest, own: true}
			}
		}
		if !o.covered(abs) {
			return abs, Attempt{}
		}
	}
	return "", Attempt{}
}

// describeOpen reads how an open, creat or exec call opens a.Path and
// names its operation (and why it cannot be handed, if it cannot); ok is
// false for a call with nothing to ask (an O_PATH open, which Landlock
// does not check, or an open_how the kernel cannot read either).
func describeOpen(a *Attempt, n *seccompNotif, shape callShape) (how openHow, ok bool) {
	switch shape.op {
	case opOpen, opOpen2:
		if shape.op == opOpen2 {
			var h unix.OpenHow
			if readMem(a.PID, uintptr(n.args[shape.flags]), unsafe.Slice((*byte)(unsafe.Pointer(&h)), unsafe.Sizeof(h))) != nil {
				return how, false // the call fails with EFAULT whatever is answered
			}
			how = openHow{flags: h.Flags, mode: h.Mode, resolve: h.Resolve}
			a.Why = unhonoured(h.Resolve)
		} else {
			how = openHow{flags: n.args[shape.flags], mode: n.args[shape.mode]}
		}
		_, err := os.Stat(a.Path)
		a.Op = openOp(how.flags, err == nil)
		if how.flags&unix.O_PATH != 0 {
			return how, false
		}
		if how.flags&unix.O_TMPFILE == unix.O_TMPFILE {
			a.Why = "it makes a nameless file in the folder"
		}
	case opCreat:
		how = openHow{flags: unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC, mode: n.args[shape.mode]}
		_, err := os.Stat(a.Path)
		a.Op = openOp(how.flags, err == nil)
	case opExec:
		a.Op, a.Why = "execute", "a program cannot be run for it once"
	}
	return how, true
}

// changesNames reports whether op makes, removes, renames or links a name.
func changesNames(op int) bool {
	switch op {
	case opMkdir, opRename, opUnlink, opRmdir, opSymlink, opLink:
		return true
	}
	return false
}

// changeName handles a call that makes, removes, renames or links a name:
// in a granted folder the observer does it (doGranted); a mkdir or rename
// past the ruleset elsewhere is an attempt to ask about; anything else
// goes on to Landlock.
func (o *Observer) changeName(fd int, n *seccompNotif, shape callShape) Attempt {
	o.grantMu.RLock()
	none := len(o.granted) == 0
	o.grantMu.RUnlock()
	if none && shape.op != opMkdir && shape.op != opRename {
		return Attempt{}
	}
	pid := int(n.pid)
	abs := func(dirfd, path int) string {
		name, err := readString(pid, uintptr(n.args[path]))
		if err != nil || name == "" {
			return ""
		}
		d := int32(unix.AT_FDCWD)
		if dirfd >= 0 {
			d = int32(n.args[dirfd])
		}
		p, _ := absolute(pid, d, name)
		return p
	}
	path := abs(shape.dirfd, shape.path)
	path2 := ""
	if shape.path2 != 0 {
		path2 = abs(shape.dirfd2, shape.path2)
	}
	if path == "" || !o.stillWaiting(fd, n.id) {
		return Attempt{}
	}
	if e, ok := o.doGranted(pid, n, shape, path, path2); ok {
		o.answer(fd, n.id, e)
		return Attempt{answered: true}
	}
	if shape.op != opMkdir && shape.op != opRename {
		return Attempt{}
	}
	outside := ""
	for _, p := range []string{path, path2} {
		if p != "" && !o.covered(p) {
			outside = p
			break
		}
	}
	if outside == "" {
		return Attempt{}
	}
	a := Attempt{PID: pid, Path: outside, Op: "mkdir", Why: "a folder cannot be made for it once"}
	if shape.op == opRename {
		a.Op, a.Why = "rename", "a rename cannot be done for it once"
	}
	return a
}

// absolute is the path a call of process pid named, made absolute
// against its working folder (dirfd AT_FDCWD) or the folder of its
// descriptor dirfd, and cleaned (not resolved); ok is false when that
// folder cannot be known.
func absolute(pid int, dirfd int32, name string) (string, bool) {
	if filepath.IsAbs(name) {
		return filepath.Clean(name), true
	}
	base := "cwd"
	if dirfd != unix.AT_FDCWD {
		base = "fd/" + strconv.Itoa(int(dirfd))
	}
	dir, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/" + base)
	if err != nil || !filepath.IsAbs(dir) {
		return "", false
	}
	return filepath.Join(dir, name), true
}

// covered reports whether the ruleset names path or a folder above it. A
// path outside that a symlink leads into it is looked up once more,
// resolved.
func (o *Observer) covered(path string) bool {
	if slices.Contains(o.listed, path) {
		return true
	}
	for _, p := range o.allowed {
		if app.IsWithin(path, p) {
			return true
		}
	}
	if r := resolvedUp(path); r != path {
		for _, p := range o.allowed {
			if app.IsWithin(r, p) {
				return true
			}
		}
	}
	return false
}

// resolvedUp is path with symlinks resolved in its longest existing
// prefix (a file about to be created does not exist). Each prefix is
// looked up with one lstat before it is resolved: resolving walks the
// path a component at a time, and a runtime's probes name paths several
// folders below the last one there.
func resolvedUp(path string) string {
	rest := ""
	for p := path; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				return filepath.Join(r, rest)
			}
		}
		if p == "/" || p == "." {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// hand opens a's path beneath folder as the call asked, following no
// symlink and never leaving folder, and makes the descriptor the call's
// result (SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SEND). A
// create the person was shown once is a file that was not there: it is
// made with O_EXCL, so that a file that appeared since is never opened (or
// emptied) on that answer. It reports whether the call was answered.
func (o *Observer) hand(fd int, id uint64, a Attempt, folder string, how openHow, once bool) bool {
	path := a.Path
	rel, err := filepath.Rel(folder, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return false
	}
	if rel == "." {
		// The path is what is allowed (a file slot, which Landlock could
		// not name while it did not exist): it is opened by its name
		// beneath its folder, and nothing else there.
		folder, rel = filepath.Dir(path), filepath.Base(path)
	}
	dfd, err := unix.Open(folder, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(dfd)
	flags := how.flags | unix.O_CLOEXEC
	if once && a.Op == "create" {
		flags |= unix.O_EXCL
	}
	mode := how.mode
	if flags&(unix.O_CREAT|unix.O_TMPFILE) == 0 {
		mode = 0 // openat2 refuses a mode it would not use
	}
	resolve := uint64(unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS) | how.resolve&unix.RESOLVE_NO_XDEV
	src, err := unix.Openat2(dfd, rel, &unix.OpenHow{Flags: flags, Mode: mode & 0o7777, Resolve: resolve})
	if err != nil {
		// The server gets the error Rootkeeper got (a missing file is
		// missing either way).
		r := seccompNotifResp{id: id, error: -int32(err.(unix.Errno))}
		return quickIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r)) == nil
	}
	defer unix.Close(src)
	// What was opened, as the kernel names it (after any bind mount), is
	// never in a protected folder (Rootkeeper's state), whatever Reach
	// said.
	if got, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(src)); err != nil || o.protected(got) {
		r := seccompNotifResp{id: id, error: -int32(unix.EACCES)}
		return quickIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r)) == nil
	}
	var cloexec uint32
	if how.flags&unix.O_CLOEXEC != 0 {
		cloexec = unix.O_CLOEXEC
	}
	add := seccompNotifAddfd{id: id, flags: unix.SECCOMP_ADDFD_FLAG_SEND, srcfd: uint32(src), newfdFlags: cloexec}
	if ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&add)) != nil {
		return false
	}
	o.handed.Add(1)
	return true
}

// protected reports whether path is in a protected folder, and not in
// the server's own temp or data folder (which Rootkeeper keeps in its
// state folder, the protected one).
func (o *Observer) protected(path string) bool {
	for _, p := range o.own {
		if app.IsWithin(path, p) {
			return false
		}
	}
	for _, p := range o.protect {
		if app.IsWithin(path, p) {
			return true
		}
	}
	return false
}
