package confine

// Every process of a confined server may read its own /proc entry. The
// ruleset names the first process's (/proc/self, resolved by the
// confining child before the exec); a Landlock rule is on that one
// folder, and the children a server starts (npx runs a shell that runs
// node, a git server runs git) have entries of their own that no rule can
// name in advance: a child's read of /proc/self/stat (libuv's resident
// set size), a listing of /proc/self/fd or /proc/self/task was refused.
// The observer sees those opens, and opens the path itself in the
// caller's own entry — read-only, following no symlink (so no magic link
// such as fd/N, cwd or exe, which could reopen a file for more than it
// was opened for) — and hands the caller the descriptor.

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ownProc returns, for a path a process (thread tid) opened, the same
// place as /proc/PID/REST of its own process or of another process of the
// sandbox: /proc/self/…, /proc/thread-self/…, /proc/mounts, /proc/net/…,
// and /proc/N/… where N is its own thread or process or one the server
// started (a descendant of its first process); and /proc itself, whose
// listing names the processes (what ps shows any user) and through which
// the rest is opened again (Chromium's sandbox opens /proc, then
// self/task and self/fd beneath it). ok is false for anything else, the
// entry of a process outside the sandbox included.
func (o *Observer) ownProc(tid int, path string) (dir, rest string, ok bool) {
	if path == "/proc" {
		return "/proc", "", true
	}
	after, found := strings.CutPrefix(path, "/proc/")
	if !found || tid <= 0 {
		return "", "", false
	}
	first, rest, _ := strings.Cut(after, "/")
	tgid := tgidOf(tid)
	if tgid <= 0 {
		return "", "", false
	}
	switch first {
	case "self":
		return "/proc/" + strconv.Itoa(tgid), rest, true
	case "mounts", "net":
		// Links to self/mounts and self/net.
		return "/proc/" + strconv.Itoa(tgid), after, true
	case "thread-self":
		return "/proc/" + strconv.Itoa(tgid) + "/task/" + strconv.Itoa(tid), rest, true
	}
	n, err := strconv.Atoi(first)
	if err != nil || (n != tgid && n != tid && !o.inSandbox(n)) {
		return "", "", false
	}
	return "/proc/" + first, rest, true
}

// inSandbox reports whether process pid descends from the server's first
// process (the one whose exec was the first call seen). A process
// reparented away from it (an orphan) does not.
func (o *Observer) inSandbox(pid int) bool {
	root := int(o.root.Load())
	for step := 0; pid > 1 && root > 0 && step < 64; step++ {
		if pid == root {
			return true
		}
		pid = statusField(pid, "PPid")
	}
	return false
}

// tgidOf is the process (thread group) of thread tid, from its status.
func tgidOf(tid int) int { return statusField(tid, "Tgid") }

// statusOctal is an octal field of /proc/PID/status (Umask), -1 if
// unknown.
func statusOctal(pid int, field string) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	_, after, found := bytes.Cut(data, []byte("\n"+field+":"))
	if !found {
		return -1
	}
	line, _, _ := bytes.Cut(after, []byte("\n"))
	n, err := strconv.ParseInt(strings.TrimSpace(string(line)), 8, 32)
	if err != nil {
		return -1
	}
	return int(n)
}

// statusField is a numeric field of /proc/PID/status, 0 if unknown.
func statusField(pid int, field string) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	_, after, found := bytes.Cut(data, []byte("\n"+field+":"))
	if !found {
		return 0
	}
	line, _, _ := bytes.Cut(after, []byte("\n"))
	n, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil {
		return 0
	}
	return n
}

// readOnlyOpen reports whether open flags ask for reading only: no write,
// no create, no truncate, no O_PATH (which Landlock does not check).
func readOnlyOpen(flags uint64) bool {
	// O_TMPFILE holds O_DIRECTORY's bit: only its own counts.
	return flags&unix.O_ACCMODE == unix.O_RDONLY && flags&(unix.O_CREAT|unix.O_TRUNC|unix.O_PATH) == 0 && flags&unix.O_TMPFILE != unix.O_TMPFILE
}

// handOwnProc answers an open of the caller's own /proc entry (a.Path is
// the entry's folder, a.rest the path beneath it) with a descriptor
// Rootkeeper opens there. Anything it cannot answer that way is let go on
// to Landlock.
func (o *Observer) handOwnProc(fd int, n *seccompNotif, a Attempt) {
	shape := pathCalls[uint32(n.nr)]
	var flags uint64
	switch shape.op {
	case opOpen:
		flags = n.args[shape.flags]
	case opOpen2:
		var h unix.OpenHow
		if readMem(int(n.pid), uintptr(n.args[shape.flags]), unsafe.Slice((*byte)(unsafe.Pointer(&h)), unsafe.Sizeof(h))) != nil || h.Resolve != 0 {
			o.cont(fd, n.id)
			return
		}
		flags = h.Flags
	default:
		o.cont(fd, n.id)
		return
	}
	if !readOnlyOpen(flags) {
		o.cont(fd, n.id)
		return
	}
	dfd, err := unix.Open(a.Path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		o.cont(fd, n.id)
		return
	}
	defer unix.Close(dfd)
	rest := a.rest
	if rest == "" {
		rest = "."
	}
	src, err := unix.Openat2(dfd, rest, &unix.OpenHow{
		Flags:   (flags | unix.O_CLOEXEC) &^ unix.O_NOCTTY,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	// What was opened is the caller's only while its call still waits
	// (its pid cannot have been reused meanwhile).
	id := n.id
	if quickIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) != nil {
		if err == nil {
			unix.Close(src)
		}
		return
	}
	if err != nil {
		if errno, ok := err.(unix.Errno); ok && errno != unix.ELOOP {
			r := seccompNotifResp{id: n.id, error: -int32(errno)}
			quickIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
			return
		}
		o.cont(fd, n.id)
		return
	}
	defer unix.Close(src)
	var cloexec uint32
	if flags&unix.O_CLOEXEC != 0 {
		cloexec = unix.O_CLOEXEC
	}
	add := seccompNotifAddfd{id: n.id, flags: unix.SECCOMP_ADDFD_FLAG_SEND, srcfd: uint32(src), newfdFlags: cloexec}
	if ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&add)) != nil {
		o.cont(fd, n.id)
	}
}
