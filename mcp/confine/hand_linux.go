package confine

// Handing a server a connection of the host's network. A server with a
// network of its own asks to connect a socket that lives in its sandbox;
// when its Network allows the destination, Rootkeeper connects a socket
// of the host's network there itself and puts it in place of the server's
// (SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SETFD, the same
// descriptor number, its flags and options) before the server's connect
// returns. What the server sends then goes to the destination with
// nothing between: the relay (relay.go in sandboxnet), which this
// replaces where it can, costs a copy and two wake-ups each way and
// about a quarter of a millisecond a connect.
//
// Why it stays bounded. The socket handed is connected (Rootkeeper's
// connect has finished when the server's returns), and a connected socket
// can neither listen nor connect elsewhere but through another connect
// (to AF_UNSPEC, or after a failure), which the observer sees and, on a
// socket of the host's network, never makes: it answers EISCONN as the
// kernel would, and EACCES to a disconnect (connectHanded). A shutdown of
// a connected socket leaves it connected. Its port is bound by name
// (bindPort), so that once its connection has ended it cannot be bound
// to another. What else the server does with it (send, receive, options)
// reaches only the destination allowed.
//
// When the relay carries it instead:
//   - the kernel cannot say which network a socket is in (SO_NETNS_COOKIE,
//     Linux 5.14): a handed socket could not be told from the server's own;
//   - the server bound its socket to an address of its own before the
//     connect (the relay keeps that binding);
//   - the program is not one known to register a socket with epoll only
//     after connecting it (handable): one that registered it before would
//     be left watching the socket replaced, and wait for ever. Go's net
//     package, Node (libuv), Python (asyncio, and blocking sockets), Deno
//     and Bun connect first; Java's Netty, for one, does not.
//
// The descriptor put in place closes on exec, as the runtimes handed to
// all ask of their sockets. A copy of the descriptor the server made
// beforehand (dup, or a child's inherited one) keeps the unconnected
// socket of the sandbox.

import (
	"debug/elf"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hostCookie is the cookie of Rootkeeper's own network namespace
// (SO_NETNS_COOKIE), or 0 where the kernel gives none.
var hostCookie = sync.OnceValue(func() uint64 {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(s)
	c, err := unix.GetsockoptUint64(s, unix.SOL_SOCKET, unix.SO_NETNS_COOKIE)
	if err != nil {
		return 0
	}
	return c
})

// isHanded reports whether sock (a server's, with a network of its own)
// is a socket of the host's network: one Rootkeeper handed it.
func isHanded(sock int) bool {
	host := hostCookie()
	if host == 0 {
		return false // none is handed where cookies are not known
	}
	c, err := unix.GetsockoptUint64(sock, unix.SOL_SOCKET, unix.SO_NETNS_COOKIE)
	return err == nil && c == host
}

// connectHanded answers a connect on a socket already handed, which is
// connected: EISCONN, as the kernel answers on a connected socket; a
// disconnect (AF_UNSPEC), which would let it bind and listen on the
// host's network, is refused.
func connectHanded(addr []byte) unix.Errno {
	if len(addr) >= 2 && *(*uint16)(unsafe.Pointer(&addr[0])) == unix.AF_UNSPEC {
		return unix.EACCES
	}
	return unix.EISCONN
}

// handConnected connects a socket of the host's network to the address addr (the
// server's, read once: what was decided is what is connected) for the
// server's socket sock, number sfd in the process of thread pid, and puts
// it in place of the server's before call n returns. It reports false,
// having done nothing, where the relay is to carry the connection.
func (o *Observer) handConnected(fd int, n *seccompNotif, sock, domain int, addr []byte) (unix.Errno, bool) {
	pid, sfd := int(n.pid), int(int32(n.args[0]))
	if hostCookie() == 0 || boundToOwnAddress(sock) || !handable(pid) {
		return 0, false
	}
	proto, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	if err != nil {
		return errnoOf(err), true
	}
	status, err := unix.FcntlInt(uintptr(sock), unix.F_GETFL, 0)
	if err != nil {
		return errnoOf(err), true
	}
	up, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return 0, false // a protocol the host's network does not have (MPTCP turned off): the relay dials TCP
	}
	defer unix.Close(up)
	copyOptions(sock, up, domain)
	if !bindPort(up, domain) {
		return 0, false
	}
	if e := connectWait(up, addr, dialTimeout); e != 0 {
		return e, true // the server's connect fails as it would have
	}
	if status&unix.O_NONBLOCK == 0 {
		unix.SetNonblock(up, false)
	}
	add := seccompNotifAddfd{id: n.id, flags: unix.SECCOMP_ADDFD_FLAG_SETFD, srcfd: uint32(up), newfd: uint32(sfd), newfdFlags: unix.O_CLOEXEC}
	if ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&add)) != nil {
		return unix.EINTR, true // the call is gone
	}
	return 0, true
}

// boundToOwnAddress reports whether the server bound sock to an address
// or port of its own before connecting it.
func boundToOwnAddress(sock int) bool {
	sa, err := unix.Getsockname(sock)
	if err != nil {
		return true
	}
	ap, ok := addrPortOf(sa)
	return !ok || ap.Port() != 0 || !ap.Addr().IsUnspecified()
}

// bindPort binds up (of domain) to a free port of its own, named: a port
// bound by name stays the socket's when its connection ends, so that a
// socket handed can never be bound again (to another port of the host's
// network). The port is drawn from the range the kernel gives connections
// their ports from, again where it is taken.
func bindPort(up, domain int) bool {
	low, high := localPorts()
	for range 32 {
		port := low + rand.IntN(high-low+1)
		var sa unix.Sockaddr = &unix.SockaddrInet4{Port: port}
		if domain == unix.AF_INET6 {
			sa = &unix.SockaddrInet6{Port: port}
		}
		if err := unix.Bind(up, sa); err != unix.EADDRINUSE {
			return err == nil
		}
	}
	return false
}

// localPorts is the range of ports the kernel gives connections
// (net.ipv4.ip_local_port_range, which IPv6 shares).
var localPorts = sync.OnceValues(func() (int, int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if f := strings.Fields(string(b)); err == nil && len(f) == 2 {
		low, err1 := strconv.Atoi(f[0])
		high, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil && 0 < low && low <= high && high < 65536 {
			return low, high
		}
	}
	return 32768, 60999 // the kernel's default
})

// handedOptions are the options of the server's socket the handed one
// gets: those a program sets before connecting, or that shape the
// connection it goes on with.
var handedOptions = []struct{ level, opt int }{
	{unix.SOL_SOCKET, unix.SO_KEEPALIVE},
	{unix.SOL_SOCKET, unix.SO_PRIORITY},
	{unix.SOL_SOCKET, unix.SO_OOBINLINE},
	{unix.IPPROTO_TCP, unix.TCP_NODELAY},
	{unix.IPPROTO_TCP, unix.TCP_KEEPIDLE},
	{unix.IPPROTO_TCP, unix.TCP_KEEPINTVL},
	{unix.IPPROTO_TCP, unix.TCP_KEEPCNT},
	{unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT},
	{unix.IPPROTO_TCP, unix.TCP_SYNCNT},
}

var freshV4, freshV6 = sync.OnceValue(func() []int { return optionsOfNew(unix.AF_INET) }),
	sync.OnceValue(func() []int { return optionsOfNew(unix.AF_INET6) })

// freshOptions are handedOptions' values on a new TCP socket of domain:
// only those the server changed are set on the socket handed.
func freshOptions(domain int) []int {
	if domain == unix.AF_INET6 {
		return freshV6()
	}
	return freshV4()
}

func optionsOfNew(domain int) []int {
	vs := make([]int, len(handedOptions))
	s, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return vs
	}
	defer unix.Close(s)
	for i, o := range handedOptions {
		vs[i], _ = unix.GetsockoptInt(s, o.level, o.opt)
	}
	return vs
}

// copyOptions gives up the options of the server's socket sock (of
// domain) that matter to a connection made for it.
func copyOptions(sock, up, domain int) {
	fresh := freshOptions(domain)
	for i, o := range handedOptions {
		if v, err := unix.GetsockoptInt(sock, o.level, o.opt); err == nil && v != fresh[i] {
			unix.SetsockoptInt(up, o.level, o.opt, v)
		}
	}
	if domain == unix.AF_INET6 {
		if v, err := unix.GetsockoptInt(sock, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY); err == nil {
			unix.SetsockoptInt(up, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, v)
		}
	}
	if l, err := unix.GetsockoptLinger(sock, unix.SOL_SOCKET, unix.SO_LINGER); err == nil && l.Onoff != 0 {
		unix.SetsockoptLinger(up, unix.SOL_SOCKET, unix.SO_LINGER, l)
	}
	for _, opt := range []int{unix.SO_SNDTIMEO, unix.SO_RCVTIMEO} {
		if tv, err := unix.GetsockoptTimeval(sock, unix.SOL_SOCKET, opt); err == nil && (tv.Sec != 0 || tv.Usec != 0) {
			unix.SetsockoptTimeval(up, unix.SOL_SOCKET, opt, tv)
		}
	}
}

// connectWait connects sock to addr and waits, up to timeout, for the
// connection (at once for a blocking socket, by poll(2) for a non-blocking
// one): its errno.
func connectWait(sock int, addr []byte, timeout time.Duration) unix.Errno {
	e := rawConnect(sock, addr)
	if e != unix.EINPROGRESS && e != unix.EINTR {
		return e
	}
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return unix.ETIMEDOUT
		}
		pfd := []unix.PollFd{{Fd: int32(sock), Events: unix.POLLOUT}}
		n, err := unix.Poll(pfd, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return errnoOf(err)
		}
		if n > 0 {
			break
		}
	}
	soErr, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return errnoOf(err)
	}
	return unix.Errno(soErr)
}

// handableRuntimes are the programs, by name, whose sockets are
// registered with epoll only once connected (see above); Go programs are
// known by their build information.
var handableRuntimes = []string{"node", "nodejs", "deno", "bun", "python", "python3"}

// programKey names a program file for handableCache: its device and inode.
type programKey struct{ dev, ino uint64 }

var (
	handableMu    sync.Mutex
	handableCache = map[programKey]bool{}
)

// handable reports whether the program thread pid runs is one a socket
// may be handed to: a runtime of handableRuntimes (python3.12 as python3)
// or a Go program. Decided once a program file.
func handable(pid int) bool {
	exe := "/proc/" + strconv.Itoa(pid) + "/exe"
	var st unix.Stat_t
	if unix.Stat(exe, &st) != nil {
		return false
	}
	key := programKey{st.Dev, st.Ino}
	handableMu.Lock()
	ok, known := handableCache[key]
	handableMu.Unlock()
	if known {
		return ok
	}
	ok = isHandableProgram(exe)
	handableMu.Lock()
	if len(handableCache) > 4096 {
		clear(handableCache)
	}
	handableCache[key] = ok
	handableMu.Unlock()
	return ok
}

// isHandableProgram reports whether the program file exe (a /proc link)
// (a /proc link or the file) is a runtime of handableRuntimes or a Go
// program.
func isHandableProgram(exe string) bool {
	target := exe
	if t, err := os.Readlink(exe); err == nil {
		target = t
	}
	name := strings.TrimSuffix(filepath.Base(target), " (deleted)")
	if i := strings.IndexFunc(name, func(r rune) bool { return r == '.' || r == '-' }); i > 0 && strings.HasPrefix(name, "python") {
		name = name[:i] // python3.12, python3-dbg
	}
	if slices.Contains(handableRuntimes, name) {
		return true
	}
	f, err := elf.Open(exe)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Section(".go.buildinfo") != nil
}
