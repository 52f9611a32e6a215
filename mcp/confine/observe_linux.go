package confine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"rootkeeper/app"
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
	opTruncate // truncate(path, length): see answerTruncate
	opWatch    // inotify_add_watch(fd, path, mask): see answerWatch
	// What the observer does itself only in a folder granted while the
	// server runs (grant_linux.go); anywhere else Landlock decides.
	opUnlink
	opRmdir
	opSymlink // the link's path; its target is argument 0
	opLink
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

// handOverListener is the child's part: it installs filter (an observed
// server's) with a new listener and sends the listener, and the
// descriptors of its network (files, each with its role), to Rootkeeper
// over the inherited unix socket sock (made by Rootkeeper before the
// start, so that the child's own filter does not apply to it), then
// closes them all.
func handOverListener(sock int, filter []byte, files []int, roles []string) error {
	fd, err := installFilter(filter, true)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(roles)
	err = unix.Sendmsg(sock, append([]byte{0}, body...), unix.UnixRights(append([]int{fd}, files...)...), nil, 0)
	unix.Close(fd)
	for _, f := range files {
		unix.Close(f)
	}
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
	listed        []string // folders the ruleset lets it list, and no more
	writable      []string // the read-write part of allowed: metadata may change there
	protect       []string // never handed, whatever Reach says (Policy.Protect, resolved)
	own           []string // its temp and data folders: read-write, even in a protected folder
	abi           int      // the Landlock ABI it is confined at
	// Wait bounds how long an attempt waits for Reach, whatever Reach does
	// (default 3 minutes); Reach itself decides how long a person is
	// waited for.
	Wait time.Duration
	// MaxWaiting bounds the attempts that wait at once (default 64); more
	// are told to Reach with a context already done.
	MaxWaiting int
	// Network decides where its sockets may reach (its contacts, its
	// lookups); nil lets TCP and lookups through, and no unix socket past
	// its folders.
	Network Network

	// sandbox is its network of its own (netns_linux.go), once the child
	// has handed it over; nil where it shares the host's network.
	sandbox  *sandbox
	upstream []netip.AddrPort // Policy.Upstream

	// inprocess is the spec of a server started from a confined thread of
	// Rootkeeper's own (launch_linux.go), nil for one started through the
	// confining child; listener is then that thread's filter's listener,
	// handed to run by launch.
	inprocess *spec
	cmdKey    *exec.Cmd // its entry in launches
	listener  chan int
	reachSet  chan struct{} // closed once Start gave the observer its Reach
	reach     Reach         // set by Start before reachSet is closed
	launched  chan struct{} // closed once the launching thread has started it (or failed)

	// granted are folders granted since it started (Extend: grant_linux.go).
	grantMu sync.RWMutex
	granted []string

	mu      sync.RWMutex // held (read) while the listener is used
	fd      int          // the listener, -1 until received or once closed
	stop    [2]int       // a pipe that wakes the loop to stop
	waiting chan struct{}
	// connecting bounds the connects done at once (connect_linux.go).
	connecting chan struct{}
	done       chan struct{}
	closing    sync.Once    // Close's work, done once however often it is called
	handed     atomic.Int64 // descriptors handed to the server (allow once)
	root       atomic.Int32 // the server's first process, once seen
	seen       atomic.Int64 // notifications received
}

// WrapObserved is Wrap, and observes the server: every path system call
// outside its ruleset is told to Start's reach before Landlock decides it.
//
// Where this package has no system call filter for the architecture, the
// server is confined but not observed: the Observer is nil (its methods
// then do nothing).
func WrapObserved(cmd *exec.Cmd, p Policy) (int, *Observer, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, nil, fmt.Errorf("observing the server: %v", err)
	}
	// Rootkeeper's end is non-blocking, so that the runtime polls it and
	// Close wakes a receive that waits; the child's stays blocking.
	unix.SetNonblock(fds[0], true)
	o := &Observer{parent: os.NewFile(uintptr(fds[0]), "seccomp-parent"), child: os.NewFile(uintptr(fds[1]), "seccomp-child"), fd: -1}
	fdInChild := 3 + len(cmd.ExtraFiles)
	abi, s, inprocess, err := wrap(cmd, p, fdInChild)
	if err != nil {
		o.parent.Close()
		o.child.Close()
		return 0, nil, err
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, o.child)
	if inprocess {
		// confine.Start starts it from a confined thread of
		// Rootkeeper's instead (launch_linux.go).
		o.inprocess, o.cmdKey = &s, cmd
		launches.Store(cmd, o)
	}
	o.abi = abi
	o.upstream = p.Upstream
	for _, r := range s.Rules {
		if r.Access == accessList {
			// Listing it is allowed, nothing beneath it: an attempt
			// there is still seen.
			o.listed = append(o.listed, r.Path)
			continue
		}
		// As named, and where Landlock put the rule (it follows links
		// in the path): the kernel names what a descriptor reaches
		// resolved.
		paths := []string{r.Path}
		if !r.Entry {
			if res := app.Resolved(r.Path); res != r.Path {
				paths = append(paths, res)
			}
		}
		o.allowed = append(o.allowed, paths...)
		if r.Access == accessWrite {
			o.writable = append(o.writable, paths...)
		}
	}
	for _, own := range []string{p.Temp, p.Data} {
		if own != "" {
			own = app.Resolved(own)
			o.allowed = append(o.allowed, own)
			o.writable = append(o.writable, own)
			o.own = append(o.own, own)
		}
	}
	for _, pr := range p.Protect {
		if abs, err := filepath.Abs(pr); err == nil && pr != "" {
			o.protect = append(o.protect, abs, app.Resolved(abs))
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
	if o.reachSet != nil {
		// Observing since the launch (confine.Start): the attempts that
		// came meanwhile wait for this Reach.
		o.reach = reach
		close(o.reachSet)
		return nil
	}
	// Started as any command: through the confining child.
	launches.Delete(o.cmdKey)
	o.inprocess = nil
	o.child.Close()
	if err := o.prepare(); err != nil {
		return err
	}
	go o.run(reach)
	return nil
}

// prepare makes what the observing loop needs.
func (o *Observer) prepare() error {
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
	o.connecting = make(chan struct{}, maxConnecting)
	o.done = make(chan struct{})
	return nil
}

// Close stops observing; calls that wait are let go on to Landlock. It
// may be called again, which does nothing (the stop pipe's descriptors
// are closed by then, their numbers perhaps another file's).
func (o *Observer) Close() {
	if o == nil {
		return
	}
	o.closing.Do(o.close)
}

func (o *Observer) close() {
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
	var fd int
	var err error
	if o.listener != nil {
		fd, err = o.takeListener()
	} else {
		fd, err = o.receive()
	}
	if err != nil {
		return // the child (or the launching thread) failed before the exec, or Close
	}
	o.mu.Lock()
	o.fd = fd
	o.mu.Unlock()
	if o.sandbox != nil {
		o.sandbox.serve(o.network())
		defer o.sandbox.close()
	}
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
	stopped := make(chan struct{})
	o.receiveCalls(ctx, &wg, fd, reach, stopped)
	<-stopped
}

// connectInline is how long a connect may hold up the server's other
// calls before another goroutine receives them: a connect on loopback or
// across a LAN is done in less.
const connectInline = 500 * time.Microsecond

// receiveCalls receives the filter's calls on listener fd and answers
// them until the observer stops, when it closes stopped. A connect is
// done by the goroutine that received it, on its own thread, and a new
// goroutine receives the calls after it only if it takes longer than
// connectInline: handed to a goroutine of its own at once, a connect
// waited for a thread to run on (about 60 µs, a third of what a watched
// connect cost).
func (o *Observer) receiveCalls(ctx context.Context, wg *sync.WaitGroup, fd int, reach Reach, stopped chan struct{}) {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(o.stop[0]), Events: unix.POLLIN}}
	for {
		pfd[0].Revents, pfd[1].Revents = 0, 0
		if _, err := unix.Poll(pfd, -1); err != nil && err != unix.EINTR {
			close(stopped)
			return
		}
		if pfd[1].Revents != 0 || pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
			close(stopped)
			return // stopped, or no process is left under the filter
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			continue
		}
		var n seccompNotif
		if err := ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
			continue // ENOENT: the caller was interrupted; EINTR
		}
		if o.seen.Add(1) == 1 && o.inprocess == nil {
			// The first call seen is the server's exec, by its first
			// process.
			o.root.Store(int32(tgidOf(int(n.pid))))
		}
		if n.nr == unix.SYS_CONNECT {
			select {
			case o.connecting <- struct{}{}:
			default:
				o.answer(fd, n.id, unix.EAGAIN)
				continue
			}
			// Done here, on this thread; should it wait longer (a dial
			// across the network, a person asked), another goroutine
			// takes over receiving the server's calls.
			next := time.AfterFunc(connectInline, func() { o.receiveCalls(ctx, wg, fd, reach, stopped) })
			o.answerConnect(fd, n)
			if !next.Stop() {
				return // the calls after it are the next goroutine's
			}
			continue
		}
		o.dispatch(ctx, wg, fd, &n, reach)
	}
}

// dispatch answers one call the filter sent: at once where nothing needs to
// be asked, else in the background through ask.
func (o *Observer) dispatch(ctx context.Context, wg *sync.WaitGroup, fd int, n *seccompNotif, reach Reach) {
	if shape, ok := metaCalls[uint32(n.nr)]; ok {
		o.answerMeta(fd, n, shape)
		return
	}
	var a Attempt
	var how openHow
	var ask bool
	switch pathCalls[uint32(n.nr)].op {
	case opWatch:
		a, ask = o.answerWatch(fd, n)
	case opTruncate:
		a, ask = o.answerTruncate(fd, n)
	default:
		a, how, ask = o.attempt(fd, n)
		switch {
		case a.answered:
			return
		case !ask:
			o.cont(fd, n.id)
			return
		case a.own:
			o.handOwnProc(fd, n, a)
			return
		}
	}
	if ask {
		o.ask(ctx, wg, fd, n.id, a, how, reach)
	}
}

// ask tells reach of attempt a (call id) in the background and answers
// the call with what comes of it: a descriptor opened beneath the folder
// reach gives, when a can be handed one; else a.refuse, or, when that is
// 0, the call let go on to Landlock, which refuses it.
func (o *Observer) ask(ctx context.Context, wg *sync.WaitGroup, fd int, id uint64, a Attempt, how openHow, reach Reach) {
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
		if folder != "" && a.CanHand && o.hand(fd, id, a, folder, how, true) {
			return
		}
		if a.refuse != 0 {
			o.answer(fd, id, a.refuse)
			return
		}
		o.cont(fd, id)
	}()
}

// receive waits for the listener from the child, and the descriptors of
// the server's network (handOverListener), which it keeps in o.sandbox.
func (o *Observer) receive() (int, error) {
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4*maxHanded))
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
	if err != nil || len(fds) < 1 {
		return -1, errors.New("no listener in the message")
	}
	o.parent.Close()
	var roles []string
	if n > 1 {
		json.Unmarshal(buf[1:n], &roles)
	}
	if len(roles) != len(fds)-1 {
		for _, f := range fds {
			unix.Close(f)
		}
		return -1, errors.New("the child's network descriptors do not match their roles")
	}
	if len(roles) > 0 {
		o.sandbox = newSandbox(fds[1:], roles)
		if o.upstream != nil {
			o.sandbox.resolver.Upstream = o.upstream
		}
	}
	return fds[0], nil
}

// maxHanded bounds the descriptors the child hands over: the listener, two
// per nameserver (three at most), two relay listeners.
const maxHanded = 16

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
