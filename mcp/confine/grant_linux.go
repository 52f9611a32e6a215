package confine

// A folder granted to a running confined server (Extend) is reachable at
// once, without a restart: a Landlock ruleset cannot be widened, but the
// observer sees every call that names a path, and does the server's calls
// in a granted folder itself, with exactly the call's own access — an open
// is handed a descriptor Rootkeeper opens beneath the folder (as for an
// allow the person made lasting), a folder is made, a name removed,
// renamed, linked or symlinked there by Rootkeeper, a file's metadata set
// or a watch added as in the server's own folders. At its next start the
// folder is in its ruleset and the kernel does it all again.
//
// What differs until then: a program in a granted folder cannot be run
// (an exec cannot be handed); a descriptor handed for a folder reaches
// beneath it only through calls the observer sees (openat and the rest
// above, not an O_PATH chain into calls it does not: a getdents on a
// handed folder works, a fchdir then relative open is seen and handed).

import (
	"path/filepath"
	"rootkeeper/app"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Extend grants folders (absolute) to the running server, read-write,
// through the observer, until it stops. A folder inside a protected one
// is never granted.
func (o *Observer) Extend(folders []string) {
	if o == nil {
		return
	}
	o.grantMu.Lock()
	defer o.grantMu.Unlock()
	for _, f := range folders {
		f = app.Resolved(filepath.Clean(f))
		if !filepath.IsAbs(f) || o.protected(f) {
			continue
		}
		if !containsFolder(o.granted, f) {
			o.granted = append(o.granted, f)
		}
	}
}

func containsFolder(list []string, f string) bool {
	for _, g := range list {
		if g == f {
			return true
		}
	}
	return false
}

// grantedAt is the granted folder path is in, "" if none.
func (o *Observer) grantedAt(path string) string {
	o.grantMu.RLock()
	defer o.grantMu.RUnlock()
	for _, g := range o.granted {
		if app.IsWithin(path, g) {
			return g
		}
	}
	return ""
}

// beneath opens the folder that holds path beneath root (O_PATH, following
// no symlink, never leaving root) and returns it with path's last name.
func beneath(root, path string) (int, string, error) {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return -1, "", unix.EACCES
	}
	dir, base := filepath.Split(rel)
	rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", err
	}
	if dir == "" {
		return rfd, base, nil
	}
	defer unix.Close(rfd)
	dfd, err := unix.Openat2(rfd, dir, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return -1, "", err
	}
	return dfd, base, nil
}

// writableRoot is the folder beneath which path may be changed: a granted
// folder, or one of the ruleset's read-write folders; "" for none.
func (o *Observer) writableRoot(path string) string {
	if g := o.grantedAt(path); g != "" {
		return g
	}
	for _, w := range o.writable {
		if app.IsWithin(path, w) {
			return w
		}
	}
	return ""
}

// doGranted does a call of the server that names a path in a granted
// folder (shape, with its paths made absolute: path, and path2 for a
// rename or link), and returns its errno; ok is false when the call is not
// one to do here (nothing it names is granted), and goes on to Landlock.
func (o *Observer) doGranted(pid int, n *seccompNotif, shape callShape, path, path2 string) (e unix.Errno, ok bool) {
	if o.grantedAt(path) == "" && (path2 == "" || o.grantedAt(path2) == "") {
		return 0, false
	}
	root := o.writableRoot(path)
	if root == "" || o.protected(path) {
		return unix.EACCES, true
	}
	dfd, base, err := beneath(root, path)
	if err != nil {
		return errnoOf(err), true
	}
	defer unix.Close(dfd)
	switch shape.op {
	case opMkdir:
		mode := uint32(n.args[shapeModeArg(shape)]) & 0o7777 &^ umaskOf(pid)
		return errnoOf(unix.Mkdirat(dfd, base, mode)), true
	case opUnlink:
		flags := 0
		if shape.flags > 0 {
			flags = int(n.args[shape.flags]) & unix.AT_REMOVEDIR
		}
		return errnoOf(unix.Unlinkat(dfd, base, flags)), true
	case opRmdir:
		return errnoOf(unix.Unlinkat(dfd, base, unix.AT_REMOVEDIR)), true
	case opSymlink:
		target, err := readString(pid, uintptr(n.args[0]))
		if err != nil {
			return errnoOf(err), true
		}
		return errnoOf(unix.Symlinkat(target, dfd, base)), true
	case opRename, opLink:
		root2 := o.writableRoot(path2)
		if root2 == "" || o.protected(path2) {
			return unix.EACCES, true
		}
		dfd2, base2, err := beneath(root2, path2)
		if err != nil {
			return errnoOf(err), true
		}
		defer unix.Close(dfd2)
		if shape.op == opLink {
			return errnoOf(unix.Linkat(dfd, base, dfd2, base2, 0)), true
		}
		var flags uint
		if n.nr == unix.SYS_RENAMEAT2 {
			flags = uint(n.args[4]) & (unix.RENAME_NOREPLACE | unix.RENAME_EXCHANGE)
		}
		return errnoOf(unix.Renameat2(dfd, base, dfd2, base2, flags)), true
	}
	return 0, false
}

// shapeModeArg is where a mkdir keeps its mode: after its path.
func shapeModeArg(shape callShape) int { return shape.path + 1 }

// umaskOf is process pid's umask (what the kernel applies to a mkdir of
// its own), 022 when it cannot be read.
func umaskOf(pid int) uint32 {
	if m := statusOctal(pid, "Umask"); m >= 0 {
		return uint32(m)
	}
	return 0o022
}

// handGranted answers an open in a granted folder with a descriptor
// opened beneath it with the call's own flags; it reports whether it did.
func (o *Observer) handGranted(fd int, id uint64, a Attempt, how openHow) bool {
	g := o.grantedAt(a.Path)
	if g == "" || o.protected(a.Path) {
		return false
	}
	if !o.hand(fd, id, a, g, how, false) {
		r := seccompNotifResp{id: id, error: -int32(unix.EACCES)}
		quickIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
	}
	return true
}
