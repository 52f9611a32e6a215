package confine

// The observer's loop. The confining child hands over its seccomp listener
// (handOverListener, receive); then every call the filter sends is
// received (poll, SECCOMP_IOCTL_NOTIF_RECV) and sent to what answers it
// (dispatch): a connect is done on the goroutine that received it, a
// metadata call at once, and a path outside the ruleset is asked about
// in the background (ask).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

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

// run takes the listener (from the confining child, or from the thread
// that launched the server), serves the server's network of its own if it
// has one, and answers the filter's calls until the observer stops.
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
	wg.Add(1)
	go func() {
		defer wg.Done()
		o.tellProbes(ctx, reach)
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
//
// It waits in poll(2), where the listener wakes it on the CPU of the
// server's thread that called (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP), and
// that thread goes on there once answered. Waiting in the runtime's
// netpoller instead, as a socket's reader would, cost Rootkeeper less CPU
// (the runtime's monitor thread woke less) but the server more time: the
// wake went through epoll to whichever thread polled, and the real
// servers' confined starts took a median 1.12-1.18x their unconfined ones
// against 1.08-1.09x this way (bench/confined-start.sh, alternated runs).
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
		// Made raw: with a call there it does not wait (the kernel counts
		// one request per call, an interrupted caller's too, which then
		// gives ENOENT), and this loop alone receives.
		if err := quickIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
			continue // ENOENT: the caller was interrupted
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
		if a.absent && a.refuse == 0 && o.tellLater(a) {
			o.cont(fd, n.id)
			return
		}
		o.ask(ctx, wg, fd, n.id, a, how, reach)
	}
}

// maxProbes bounds the absent attempts waiting to be told to Reach; past
// it, one is asked as any other (its call waits for Reach), so that a
// server probing faster than they are recorded is slowed, not let run
// ahead of its record.
const maxProbes = 64

// tellLater queues absent attempt a for tellProbes, reporting whether
// there was room.
func (o *Observer) tellLater(a Attempt) bool {
	select {
	case o.probes <- a:
		return true
	default:
		return false
	}
}

// tellProbes tells Reach the absent attempts tellLater queued, with a
// context already done (their calls have gone on: nobody waits for an
// answer), until ctx ends, and then those still queued. A server launched
// from Rootkeeper's thread is observed before Start gives its Reach: its
// probes are told once it has.
func (o *Observer) tellProbes(ctx context.Context, reach Reach) {
	if o.reachSet != nil {
		select {
		case <-o.reachSet:
			reach = o.reach
		case <-ctx.Done():
			return
		}
	}
	told, cancel := context.WithCancel(context.Background())
	cancel()
	for {
		select {
		case a := <-o.probes:
			reach(told, a)
		case <-ctx.Done():
			for {
				select {
				case a := <-o.probes:
					reach(told, a)
				default:
					return
				}
			}
		}
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
