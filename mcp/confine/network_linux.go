package confine

// The observer's side of a server's network of its own (netns_linux.go):
// the resolver and the relay, served from the descriptors the child made
// inside the sandbox, and the decision on each contact.

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
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
}

// newSandbox takes the descriptors the child handed over, by role.
func newSandbox(fds []int, roles []string) *sandbox {
	sb := &sandbox{resolver: &sandboxnet.Resolver{}}
	for i, fd := range fds {
		role, at, _ := strings.Cut(roles[i], " ")
		f := os.NewFile(uintptr(fd), role)
		switch role {
		case roleDNSUDP:
			if pc, err := net.FilePacketConn(f); err == nil {
				sb.dnsUDP = append(sb.dnsUDP, pc)
				if ap, err := netip.ParseAddrPort(at); err == nil {
					sb.resolver.Upstream = append(sb.resolver.Upstream, ap)
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
func (sb *sandbox) carry(ctx context.Context, sock, domain int, dest netip.AddrPort) unix.Errno {
	d := net.Dialer{Timeout: dialTimeout}
	up, err := d.DialContext(ctx, "tcp", dest.String())
	if err != nil {
		return dialErrno(err)
	}
	at, ok := sb.relay.Addr(domain == unix.AF_INET6)
	if !ok {
		up.Close()
		return unix.ENETUNREACH
	}
	if e := connectNow(sock, sockaddrInet(at, domain)); e != 0 {
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

// dialTimeout bounds a dial Rootkeeper makes for a server (the kernel's
// own default for a TCP connect is about two minutes).
const dialTimeout = 30 * time.Second

// dialErrno is the errno a dial failed with, as the server's connect
// would have.
func dialErrno(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return unix.ETIMEDOUT
	}
	return unix.ECONNREFUSED
}

// connectNow connects sock (the server's, perhaps non-blocking) to a
// listener on loopback and waits for it: the answer comes at once.
func connectNow(sock int, addr []byte) unix.Errno {
	e := rawConnect(sock, addr)
	if e != unix.EINPROGRESS {
		return e
	}
	pfd := []unix.PollFd{{Fd: int32(sock), Events: unix.POLLOUT}}
	if n, err := unix.Poll(pfd, 5000); err != nil || n == 0 {
		return unix.ETIMEDOUT
	}
	soErr, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return errnoOf(err)
	}
	return unix.Errno(soErr)
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

// listensInside reports whether something in the sandbox of process pid
// listens for TCP at dest (its /proc/PID/net, which is its namespace's):
// a connect there stays inside, and goes on as asked.
func listensInside(pid int, dest netip.AddrPort) bool {
	for _, f := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/net/" + f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 4 || fields[3] != "0A" { // TCP_LISTEN
				continue
			}
			local, ok := procNetAddr(fields[1])
			if ok && local.Port() == dest.Port() && (local.Addr() == dest.Addr() || local.Addr().IsUnspecified()) {
				return true
			}
		}
	}
	return false
}

// procNetAddr parses an address of /proc/net/tcp{,6}: hexadecimal, each
// 32-bit word in the host's byte order, then the port.
func procNetAddr(s string) (netip.AddrPort, bool) {
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(hexAddr)
	port, perr := strconv.ParseUint(hexPort, 16, 16)
	if err != nil || perr != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	for i := 0; i < len(raw); i += 4 {
		w := binary.NativeEndian.Uint32(raw[i:])
		binary.BigEndian.PutUint32(raw[i:], w)
	}
	a, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), true
}
