package confine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kinds of path system call (callShape.op).
const (
	opOpen = iota + 1
	opOpen2
	opCreat
	opMkdir
	opRename
	opExec
)

// callShape says where a path system call keeps its arguments: indexes
// into seccomp_data.args, dirfd -1 for "relative to the working folder",
// path2 0 for "no second path".
type callShape struct {
	op                  int
	dirfd, path, flags  int
	mode, dirfd2, path2 int
}

// seccompNotif is struct seccomp_notif.
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

// seccompNotifResp is struct seccomp_notif_resp.
type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// seccompNotifAddfd is struct seccomp_notif_addfd.
type seccompNotifAddfd struct {
	id         uint64
	flags      uint32
	srcfd      uint32
	newfd      uint32
	newfdFlags uint32
}

// notifyFilter sends every system call of pathCalls and metaCalls to the
// listener (SECCOMP_RET_USER_NOTIF) and allows everything else, but for
// three refusals (EPERM) made here: io_uring_setup, whose rings open files
// and set extended attributes without these system calls, and the two
// ioctls that set a file's attribute flags (chattr), which Landlock does
// not govern either. It decides nothing else: the observer answers a path
// call with SECCOMP_USER_NOTIF_FLAG_CONTINUE, so Landlock decides as if
// the filter were not there, and does a metadata call itself where it may
// (meta_linux.go). A call through a foreign ABI is allowed here;
// noUnixSockets refuses those below unixSocketABI.
func notifyFilter(arch uint32) []unix.SockFilter {
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		allw  = unix.SECCOMP_RET_ALLOW
		notif = unix.SECCOMP_RET_USER_NOTIF
		eperm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)&unix.SECCOMP_RET_DATA
	)
	nrs := make([]uint32, 0, len(pathCalls)+len(metaCalls))
	for nr := range pathCalls {
		nrs = append(nrs, nr)
	}
	for nr := range metaCalls {
		nrs = append(nrs, nr)
	}
	n := len(nrs)
	prog := []unix.SockFilter{
		bpfStmt(ld, offArch),
		bpfJump(jeq, arch, 1, 0),
		bpfStmt(ret, allw),
		bpfStmt(ld, offNr),
	}
	// One test per call: equal jumps to the notify below (at 7+n).
	for i, nr := range nrs {
		prog = append(prog, bpfJump(jeq, nr, uint8(2+n-i), 0))
	}
	return append(prog,
		/* 4+n */ bpfJump(jeq, unix.SYS_IOCTL, 3, 0),
		/* 5+n */ bpfJump(jeq, unix.SYS_IO_URING_SETUP, 6, 0),
		/* 6+n */ bpfStmt(ret, allw),
		/* 7+n */ bpfStmt(ret, notif),
		/* 8+n */ bpfStmt(ld, offArg1),
		/* 9+n */ bpfJump(jeq, fsIocSetflags, 2, 0),
		/* 10+n */ bpfJump(jeq, fsIocFssetxattr, 1, 0),
		/* 11+n */ bpfStmt(ret, allw),
		/* 12+n */ bpfStmt(ret, eperm),
	)
}

// The ioctls that set a file's attribute flags (linux/fs.h): FS_IOC_SETFLAGS
// (chattr) and FS_IOC_FSSETXATTR (xfs_io chattr), as the kernel reads their
// 32-bit command.
const (
	fsIocSetflags   = 0x40086602
	fsIocFssetxattr = 0x401c5820
)

// handOverListener is the child's part: it installs notifyFilter with a new
// listener and sends the listener to Rootkeeper over the inherited unix
// socket sock (made by Rootkeeper before the start, so that the child's
// own filter on unix sockets does not apply), then closes both.
func handOverListener(sock int) error {
	if nativeArch == 0 {
		return fmt.Errorf("no system call filter for %s", runtime.GOARCH)
	}
	prog := notifyFilter(nativeArch)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if e != 0 {
		return fmt.Errorf("seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER): %v", e)
	}
	err := unix.Sendmsg(sock, []byte{0}, unix.UnixRights(int(fd)), nil, 0)
	unix.Close(int(fd))
	unix.Close(sock)
	if err != nil {
		return fmt.Errorf("handing over the seccomp listener: %v", err)
	}
	return nil
}

// Observer watches a confined server's path system calls through a seccomp
// listener. Create it with WrapObserved, Start it once the command has
// started, Close it when done.
type Observer struct {
	parent, child *os.File
	allowed       []string
	writable      []string // the read-write part of allowed: metadata may change there
	protect       []string // never handed, whatever Reach says (Policy.Protect, resolved)
	// Wait bounds how long an attempt waits for Reach, whatever Reach does
	// (default 3 minutes); Reach itself decides how long a person is
	// waited for.
	Wait time.Duration
	// MaxWaiting bounds the attempts that wait at once (default 64); more
	// are told to Reach with a context already done.
	MaxWaiting int

	mu      sync.RWMutex // held (read) while the listener is used
	fd      int          // the listener, -1 until received or once closed
	stop    [2]int       // a pipe that wakes the loop to stop
	waiting chan struct{}
	done    chan struct{}
	handed  atomic.Int64 // descriptors handed to the server (allow once)
	seen    atomic.Int64 // notifications received
}

// WrapObserved is Wrap, and observes the server: every path system call
// outside its ruleset is told to Start's reach before Landlock decides it.
//
// Where this package has no system call filter for the architecture, the
// server is confined but not observed: the Observer is nil (its methods
// then do nothing).
func WrapObserved(cmd *exec.Cmd, p Policy) (int, *Observer, error) {
	if nativeArch == 0 {
		abi, err := Wrap(cmd, p)
		return abi, nil, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, nil, fmt.Errorf("observing the server: %v", err)
	}
	// Rootkeeper's end is non-blocking, so that the runtime polls it and
	// Close wakes a receive that waits; the child's stays blocking.
	unix.SetNonblock(fds[0], true)
	o := &Observer{parent: os.NewFile(uintptr(fds[0]), "seccomp-parent"), child: os.NewFile(uintptr(fds[1]), "seccomp-child"), fd: -1}
	fdInChild := 3 + len(cmd.ExtraFiles)
	abi, s, err := wrap(cmd, p, fdInChild)
	if err != nil {
		o.parent.Close()
		o.child.Close()
		return 0, nil, err
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, o.child)
	for _, r := range s.Rules {
		o.allowed = append(o.allowed, r.Path)
		if r.Access == accessWrite {
			o.writable = append(o.writable, r.Path)
		}
	}
	if p.Temp != "" {
		o.allowed = append(o.allowed, resolved(p.Temp))
		o.writable = append(o.writable, resolved(p.Temp))
	}
	for _, pr := range p.Protect {
		if abs, err := filepath.Abs(pr); err == nil && pr != "" {
			o.protect = append(o.protect, abs, resolved(abs))
		}
	}
	return abi, o, nil
}

// Start begins to observe, once the command has started (its copy of the
// socket is then closed here). It returns at once; the listener arrives
// when the child is about to execute the server.
func (o *Observer) Start(reach Reach) error {
	if o == nil {
		return nil
	}
	o.child.Close()
	if o.Wait == 0 {
		o.Wait = 3 * time.Minute
	}
	if o.MaxWaiting == 0 {
		o.MaxWaiting = 64
	}
	if err := unix.Pipe2(o.stop[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	o.waiting = make(chan struct{}, o.MaxWaiting)
	o.done = make(chan struct{})
	go o.run(reach)
	return nil
}

// Close stops observing; calls that wait are let go on to Landlock.
func (o *Observer) Close() {
	if o == nil {
		return
	}
	if o.done == nil {
		o.parent.Close()
		o.child.Close()
		return
	}
	unix.Write(o.stop[1], []byte{0})
	o.parent.Close() // wakes a receive that waits for the listener
	<-o.done
}

// Handed is how many descriptors were handed to the server.
func (o *Observer) Handed() int {
	if o == nil {
		return 0
	}
	return int(o.handed.Load())
}

// Seen is how many path system calls of the server were seen.
func (o *Observer) Seen() int {
	if o == nil {
		return 0
	}
	return int(o.seen.Load())
}

func (o *Observer) run(reach Reach) {
	defer close(o.done)
	defer unix.Close(o.stop[0])
	defer unix.Close(o.stop[1])
	fd, err := o.receive()
	if err != nil {
		return // the child failed before the exec, or Close
	}
	o.mu.Lock()
	o.fd = fd
	o.mu.Unlock()
	// Wake the waiting caller on this CPU (Linux 6.6 and newer): the
	// round trip of a notification halves. Older kernels refuse; fine.
	flags := uint64(unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, uintptr(flags))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		o.mu.Lock()
		unix.Close(o.fd)
		o.fd = -1
		o.mu.Unlock()
	}()
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(o.stop[0]), Events: unix.POLLIN}}
	for {
		pfd[0].Revents, pfd[1].Revents = 0, 0
		if _, err := unix.Poll(pfd, -1); err != nil && err != unix.EINTR {
			return
		}
		if pfd[1].Revents != 0 || pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
			return // stopped, or no process is left under the filter
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			continue
		}
		var n seccompNotif
		if err := ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
			continue // ENOENT: the caller was interrupted; EINTR
		}
		o.seen.Add(1)
		if shape, ok := metaCalls[uint32(n.nr)]; ok {
			o.answerMeta(fd, &n, shape)
			continue
		}
		a, how, ok := o.attempt(fd, &n)
		if !ok {
			o.cont(fd, n.id)
			continue
		}
		wctx := ctx
		select {
		case o.waiting <- struct{}{}:
		default:
			var c context.CancelFunc
			wctx, c = context.WithCancel(ctx)
			c() // too many waiting: Reach hears of it but nobody waits
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if wctx == ctx {
				defer func() { <-o.waiting }()
			}
			rctx, c := context.WithTimeout(wctx, o.Wait)
			folder := reach(rctx, a)
			c()
			o.mu.RLock()
			defer o.mu.RUnlock()
			if folder == "" || !a.CanHand || !o.hand(fd, n.id, a.Path, folder, how) {
				o.cont(fd, n.id)
			}
		}()
	}
}

// receive waits for the listener from the child.
func (o *Observer) receive() (int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	raw, err := o.parent.SyscallConn()
	if err != nil {
		return -1, err
	}
	var n, oobn int
	var rerr error
	err = raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN
	})
	if err != nil {
		return -1, err
	}
	if rerr != nil {
		return -1, rerr
	}
	if n == 0 {
		return -1, errors.New("the confining child ended before handing over its listener")
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, errors.New("no listener in the message")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1, errors.New("no listener in the message")
	}
	o.parent.Close()
	return fds[0], nil
}

func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

// answerMeta answers a metadata call with what doing it (or refusing it)
// gave.
func (o *Observer) answerMeta(fd int, n *seccompNotif, shape metaShape) {
	e := o.meta(fd, n, shape)
	r := seccompNotifResp{id: n.id, error: -int32(e)}
	ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
}

// cont lets the call go on as if it had not been seen: Landlock decides.
func (o *Observer) cont(fd int, id uint64) {
	r := seccompNotifResp{id: id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
}

// openHow is what an open asked for.
type openHow struct {
	flags   uint64
	mode    uint64
	resolve uint64 // openat2's resolve flags
}

// openOp is what an open with flags does: create (O_CREAT), truncate
// (O_TRUNC), write (for writing), list (O_DIRECTORY) or read.
func openOp(flags uint64) string {
	switch {
	case flags&unix.O_CREAT != 0:
		return "create"
	case flags&unix.O_TRUNC != 0 && flags&(unix.O_WRONLY|unix.O_RDWR) != 0:
		return "truncate"
	case flags&(unix.O_WRONLY|unix.O_RDWR) != 0:
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
	paths := [][2]int{{shape.dirfd, shape.path}}
	if shape.path2 != 0 {
		paths = append(paths, [2]int{shape.dirfd2, shape.path2})
	}
	outside := ""
	for _, p := range paths {
		name, err := readString(pid, uintptr(n.args[p[1]]))
		if err != nil || name == "" {
			continue
		}
		abs := name
		if !filepath.IsAbs(name) {
			base := "cwd"
			if p[0] >= 0 && int32(n.args[p[0]]) != unix.AT_FDCWD {
				base = "fd/" + strconv.Itoa(int(int32(n.args[p[0]])))
			}
			dir, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/" + base)
			if err != nil || !filepath.IsAbs(dir) {
				continue
			}
			abs = filepath.Join(dir, name)
		}
		abs = filepath.Clean(abs)
		if o.covered(abs) {
			continue
		}
		outside = abs
		break
	}
	if outside == "" {
		return Attempt{}, how, false
	}
	// What was read is the caller's only if it is still waiting.
	id := n.id
	if ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) != nil {
		return Attempt{}, how, false
	}
	a := Attempt{PID: pid, Path: outside}
	switch shape.op {
	case opOpen, opOpen2:
		if shape.op == opOpen2 {
			var h unix.OpenHow
			if readMem(pid, uintptr(n.args[shape.flags]), unsafe.Slice((*byte)(unsafe.Pointer(&h)), unsafe.Sizeof(h))) != nil {
				// The kernel cannot read it either: the call fails with
				// EFAULT whatever is answered.
				return Attempt{}, how, false
			}
			how = openHow{flags: h.Flags, mode: h.Mode, resolve: h.Resolve}
			a.Why = unhonoured(h.Resolve)
		} else {
			how = openHow{flags: n.args[shape.flags], mode: n.args[shape.mode]}
		}
		a.Op = openOp(how.flags)
		if how.flags&unix.O_PATH != 0 {
			// Landlock does not check an O_PATH open: it succeeds, and
			// there is nothing to ask.
			return Attempt{}, how, false
		}
		if how.flags&unix.O_TMPFILE == unix.O_TMPFILE {
			a.Why = "it makes a nameless file in the folder"
		}
	case opCreat:
		how = openHow{flags: unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC, mode: n.args[shape.mode]}
		a.Op = "create"
	case opMkdir:
		a.Op, a.Why = "mkdir", "a folder cannot be made for it once"
	case opRename:
		a.Op, a.Why = "rename", "a rename cannot be done for it once"
	case opExec:
		a.Op, a.Why = "execute", "a program cannot be run for it once"
	}
	a.CanHand = a.Why == ""
	return a, how, true
}

// covered reports whether the ruleset names path or a folder above it. A
// path outside that a symlink leads into it is looked up once more,
// resolved.
func (o *Observer) covered(path string) bool {
	for _, p := range o.allowed {
		if path == p || strings.HasPrefix(path, p) && (p == "/" || path[len(p)] == '/') {
			return true
		}
	}
	if r := resolvedUp(path); r != path {
		for _, p := range o.allowed {
			if r == p || strings.HasPrefix(r, p) && (p == "/" || r[len(p)] == '/') {
				return true
			}
		}
	}
	return false
}

// resolvedUp is path with symlinks resolved in its longest existing
// prefix (a file about to be created does not exist).
func resolvedUp(path string) string {
	rest := ""
	for p := path; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == "/" || p == "." {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// hand opens path beneath folder as the call asked, following no symlink
// and never leaving folder, and makes the descriptor the call's result
// (SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SEND). It reports
// whether the call was answered.
func (o *Observer) hand(fd int, id uint64, path, folder string, how openHow) bool {
	rel, err := filepath.Rel(folder, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return false
	}
	dfd, err := unix.Open(folder, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(dfd)
	flags := how.flags | unix.O_CLOEXEC
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
		return ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r)) == nil
	}
	defer unix.Close(src)
	// What was opened, as the kernel names it (after any bind mount), is
	// never in a protected folder (Rootkeeper's state), whatever Reach
	// said.
	if got, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(src)); err != nil || o.protected(got) {
		r := seccompNotifResp{id: id, error: -int32(unix.EACCES)}
		return ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r)) == nil
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

// protected reports whether path is in a protected folder.
func (o *Observer) protected(path string) bool {
	for _, p := range o.protect {
		if within(path, p) {
			return true
		}
	}
	return false
}

// readString reads a NUL-terminated path from the server's memory.
func readString(pid int, addr uintptr) (string, error) {
	var out []byte
	buf := make([]byte, 256)
	for len(out) < unix.PathMax {
		// Up to the page's end first: the next page may not be mapped.
		n := min(uintptr(len(buf)), 4096-addr%4096)
		if err := readMem(pid, addr, buf[:n]); err != nil {
			return "", err
		}
		if i := indexByte(buf[:n], 0); i >= 0 {
			return string(append(out, buf[:i]...)), nil
		}
		out = append(out, buf[:n]...)
		addr += n
	}
	return "", unix.ENAMETOOLONG
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func readMem(pid int, addr uintptr, buf []byte) error {
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: addr, Len: len(buf)}}
	n, err := unix.ProcessVMReadv(pid, local, remote, 0)
	if err != nil {
		return err
	}
	if n != len(buf) {
		return unix.EFAULT
	}
	return nil
}
