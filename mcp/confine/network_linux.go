package confine

// The observer's side of a server's network of its own (netns_linux.go):
// the resolver and the relay, served from the descriptors the child made
// inside the sandbox, and the decision on each contact.

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"rootkeeper/mcp/confine/sandboxnet"
)

// sandbox is what Rootkeeper serves a server's network of its own from.
type sandbox struct {
	resolver *sandboxnet.Resolver
	relay    *sandboxnet.Relay
	dnsUDP   []net.PacketConn
	dnsTCP   []net.Listener
	relayLs  []net.Listener
	inside   []netip.Addr // the nameserver addresses it holds on its loopback
	// diag asks the sandbox's namespace what listens in it (a
	// NETLINK_SOCK_DIAG socket the child made there; /proc/PID/net/tcp
	// walks every socket of the machine, 10 ms or more).
	diag   int
	diagMu sync.Mutex
}

// newSandbox takes the descriptors the child handed over, by role.
func newSandbox(fds []int, roles []string) *sandbox {
	sb := &sandbox{resolver: &sandboxnet.Resolver{}, diag: -1}
	for i, fd := range fds {
		role, at, _ := strings.Cut(roles[i], " ")
		if role == roleDiag {
			sb.diag = fd
			continue
		}
		f := os.NewFile(uintptr(fd), role)
		switch role {
		case roleDNSUDP:
			if pc, err := net.FilePacketConn(f); err == nil {
				sb.dnsUDP = append(sb.dnsUDP, pc)
				if ap, err := netip.ParseAddrPort(at); err == nil {
					sb.resolver.Upstream = append(sb.resolver.Upstream, ap)
					sb.inside = append(sb.inside, ap.Addr())
				}
			}
		case roleDNSTCP:
			if l, err := net.FileListener(f); err == nil {
				sb.dnsTCP = append(sb.dnsTCP, l)
			}
		case roleRelay:
			if l, err := net.FileListener(f); err == nil {
				sb.relayLs = append(sb.relayLs, l)
			}
		}
		f.Close()
	}
	return sb
}

// serve starts the resolver and the relay; lookups are decided by n.
func (sb *sandbox) serve(n Network) {
	sb.resolver.Lookup = n.Lookup
	for _, pc := range sb.dnsUDP {
		go sb.resolver.ServeUDP(pc)
	}
	for _, l := range sb.dnsTCP {
		go sb.resolver.ServeTCP(l)
	}
	sb.relay = sandboxnet.NewRelay(sb.relayLs...)
}

// close stops serving; relayed connections go on to their ends.
func (sb *sandbox) close() {
	if sb.diag >= 0 {
		sb.diagMu.Lock()
		unix.Close(sb.diag)
		sb.diag = -1
		sb.diagMu.Unlock()
	}
	for _, pc := range sb.dnsUDP {
		pc.Close()
	}
	for _, l := range sb.dnsTCP {
		l.Close()
	}
	if sb.relay != nil {
		sb.relay.Close()
	} else {
		for _, l := range sb.relayLs {
			l.Close()
		}
	}
}

// openNetwork is the network of a server nobody decides for
// (Observer.Network nil): TCP goes anywhere, a unix socket past its
// folders nowhere.
type openNetwork struct{}

func (openNetwork) Contact(_ context.Context, c Contact) bool { return c.Proto == "tcp" }
func (openNetwork) Lookup(string) bool                        { return true }

// carry dials dest from outside the sandbox and joins it, through the
// relay, to the server's socket sock (of domain), which it connects to the
// relay's listener of its family. The call's answer is the dial's error,
// so that a refused or unreachable destination fails the connect as it
// would have.
func (sb *sandbox) carry(sock, domain int, dest netip.AddrPort) unix.Errno {
	up, e := dial(dest)
	if e != 0 {
		return e
	}
	at, ok := sb.relay.Addr(domain == unix.AF_INET6)
	if !ok {
		up.Close()
		return unix.ENETUNREACH
	}
	if e := connectWait(sock, sockaddrInet(at, domain), relayConnectTimeout); e != 0 {
		up.Close()
		return e
	}
	sa, err := unix.Getsockname(sock)
	if err != nil {
		up.Close()
		return errnoOf(err)
	}
	from, ok := addrPortOf(sa)
	if !ok || !sb.relay.Pair(from, up) {
		return unix.ECONNREFUSED
	}
	return 0
}

// relayConnectTimeout bounds the connect of a server's socket to the
// relay's listener on loopback, which answers at once.
const relayConnectTimeout = 5 * time.Second

// dialTimeout bounds a dial Rootkeeper makes for a server (the kernel's
// own default for a TCP connect is about two minutes).
const dialTimeout = 30 * time.Second

// dial connects to dest from the host's network, waiting up to
// dialTimeout in the observer's goroutine (already its own: the runtime's
// poller would cost tens of microseconds more); its error is what the
// server's connect would have got.
func dial(dest netip.AddrPort) (net.Conn, unix.Errno) {
	family := unix.AF_INET
	if dest.Addr().Is6() {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, errnoOf(err)
	}
	if e := connectWait(fd, sockaddrInet(dest, family), dialTimeout); e != 0 {
		unix.Close(fd)
		return nil, e
	}
	f := os.NewFile(uintptr(fd), "upstream")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, errnoOf(err)
	}
	return c, 0
}

// inetAddr is the destination of an AF_INET or AF_INET6 sockaddr, an
// IPv4-mapped address unmapped.
func inetAddr(b []byte) (netip.AddrPort, bool) {
	if len(b) < 2 {
		return netip.AddrPort{}, false
	}
	switch binary.NativeEndian.Uint16(b) {
	case unix.AF_INET:
		if len(b) < unix.SizeofSockaddrInet4 {
			return netip.AddrPort{}, false
		}
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:4])), true
	case unix.AF_INET6:
		if len(b) < unix.SizeofSockaddrInet6 {
			return netip.AddrPort{}, false
		}
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])).Unmap(), binary.BigEndian.Uint16(b[2:4])), true
	}
	return netip.AddrPort{}, false
}

// sockaddrInet is ap as a sockaddr of domain (an IPv4 address mapped for
// an AF_INET6 socket).
func sockaddrInet(ap netip.AddrPort, domain int) []byte {
	if domain == unix.AF_INET6 {
		b := make([]byte, unix.SizeofSockaddrInet6)
		binary.NativeEndian.PutUint16(b, unix.AF_INET6)
		binary.BigEndian.PutUint16(b[2:], ap.Port())
		a := ap.Addr().As16()
		copy(b[8:], a[:])
		return b
	}
	b := make([]byte, unix.SizeofSockaddrInet4)
	binary.NativeEndian.PutUint16(b, unix.AF_INET)
	binary.BigEndian.PutUint16(b[2:], ap.Port())
	a := ap.Addr().Unmap().As4()
	copy(b[4:], a[:])
	return b
}

func addrPortOf(sa unix.Sockaddr) (netip.AddrPort, bool) {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)), true
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port)), true
	}
	return netip.AddrPort{}, false
}

// mayListen reports whether something inside the sandbox could listen at
// a: its loopback, and the nameserver addresses it holds there.
func (sb *sandbox) mayListen(a netip.Addr) bool {
	return a.IsLoopback() || slices.Contains(sb.inside, a)
}

// listensInside reports whether something in the sandbox listens for TCP
// at dest: a connect there stays inside, and goes on as asked. Only
// loopback and the nameserver addresses are inside the sandbox; the
// sandbox's namespace is asked (inet_diag) which socket a connection to
// dest would reach.
func (sb *sandbox) listensInside(dest netip.AddrPort) bool {
	sb.diagMu.Lock()
	defer sb.diagMu.Unlock()
	return sb.diag >= 0 && listenerAt(sb.diag, dest)
}

// listenerAt reports whether a TCP connection to dest, in the namespace of
// the NETLINK_SOCK_DIAG socket fd, would reach a listening socket: the
// kernel's own lookup of a connection's socket (struct inet_diag_req_v2
// without NLM_F_DUMP, its id the connection's far end as the local one; an
// IPv6 listener that takes IPv4 too is found for an IPv4 address), one
// message asked and one answered where a dump of every listener walks the
// whole listening table (~25 µs a family).
func listenerAt(fd int, dest netip.AddrPort) bool {
	const (
		sizeReq   = 56
		tcpListen = 10
	)
	var req [unix.SizeofNlMsghdr + sizeReq]byte
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST)
	body := req[unix.SizeofNlMsghdr:]
	body[0], body[1] = unix.AF_INET, unix.IPPROTO_TCP
	a := dest.Addr().Unmap()
	if a.Is6() {
		body[0] = unix.AF_INET6
	}
	binary.NativeEndian.PutUint32(body[4:], 1<<tcpListen)
	binary.BigEndian.PutUint16(body[8:], dest.Port()) // idiag_sport: the local end
	if a.Is4() {
		v4 := a.As4()
		copy(body[12:], v4[:])
	} else {
		v6 := a.As16()
		copy(body[12:], v6[:])
	}
	binary.NativeEndian.PutUint64(body[48:], ^uint64(0)) // INET_DIAG_NOCOOKIE
	if unix.Sendto(fd, req[:], 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}) != nil {
		return false
	}
	var buf [512]byte
	n, _, err := unix.Recvfrom(fd, buf[:], 0)
	if err != nil || n < unix.SizeofNlMsghdr+2 {
		return false
	}
	if binary.NativeEndian.Uint16(buf[4:]) != unix.SOCK_DIAG_BY_FAMILY {
		return false // NLMSG_ERROR: ENOENT, nothing there
	}
	return buf[unix.SizeofNlMsghdr+1] == tcpListen // idiag_state
}
