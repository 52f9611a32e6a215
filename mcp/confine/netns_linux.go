package confine

// A confined server's network of its own. Where the kernel lets
// Rootkeeper make namespaces (user namespaces for an ordinary user; root
// needs none), the confining child starts in a new network namespace
// (and, for an ordinary user, a user namespace mapping that user to
// itself, so that files keep their owners). Before it confines itself the
// child brings loopback up, puts the host's nameserver addresses on it,
// and makes there what Rootkeeper serves from outside: a DNS socket (UDP
// and TCP) at each nameserver address, and the relay's listeners on
// loopback (relayDoorV4 and relayDoorV6). It hands those to Rootkeeper with the seccomp
// listener, drops the capabilities it had in its namespace, and executes
// the server, which has nothing but loopback: every packet it sends stays
// in the sandbox unless Rootkeeper carries it (sandboxnet), and what it
// looks up reaches Rootkeeper's resolver at the address its libc already
// uses (glibc, musl, Go and c-ares check that an answer comes from the
// address asked: it does).
//
// Where namespaces cannot be made (user namespaces disabled or held back
// by a security module), the server shares the host's network: its
// connects are still decided (the observer does each itself), but no name
// is known and a datagram sent with an address is not seen (Isolation
// says why).

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// netSpec is what the confining child makes of the server's network.
type netSpec struct {
	// Nameservers are the addresses the server's resolver asks (the
	// host's, from /etc/resolv.conf), which get a DNS socket each.
	Nameservers []string `json:"nameservers"`
}

// The roles of the descriptors the child hands over after the listener
// (handOver's message).
const (
	roleDNSUDP = "dns-udp"
	roleDNSTCP = "dns-tcp"
	roleRelay  = "relay"
	roleDiag   = "diag" // a NETLINK_SOCK_DIAG socket: what listens inside
)

// isolate makes cmd start in namespaces of its own (see above): a network
// namespace, and for an ordinary user a user namespace mapping the user
// to itself, with the two capabilities the child needs there to set up
// its network, which it drops before it executes the server.
func isolate(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Cloneflags |= syscall.CLONE_NEWNET
	if uid := os.Geteuid(); uid != 0 {
		gid := os.Getegid()
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
		a.AmbientCaps = []uintptr{unix.CAP_NET_ADMIN, unix.CAP_NET_BIND_SERVICE}
	}
}

// isolateNetwork makes cmd start in namespaces of its own where the
// kernel allows it, and returns what the child is to make of its network;
// nil where it shares the host's.
func isolateNetwork(cmd *exec.Cmd) *netSpec {
	if ok, _ := isolation(); !ok {
		return nil
	}
	isolate(cmd)
	return &netSpec{Nameservers: nameservers()}
}

// probeVerb is the hidden verb of the child that tries isolation once.
const probeVerb = "__netprobe"

// Isolation reports whether confined servers get a network of their own
// here, and why not (asked once: it starts a short child).
func Isolation() (bool, string) { return isolation() }

var isolation = sync.OnceValues(func() (bool, string) {
	self, err := os.Executable()
	if err != nil {
		return false, "Rootkeeper cannot find its own executable: " + err.Error()
	}
	cmd := exec.Command(self, probeVerb)
	isolate(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		why := strings.TrimSpace(string(out))
		if why == "" {
			why = err.Error()
		}
		return false, "the kernel lets Rootkeeper make no network namespace (" + why + ")"
	}
	return true, ""
})

// probe is the child of Isolation: it sets up a network as a server's
// would be, and says whether that worked.
func probe() error {
	files, _, err := setUpNetwork(netSpec{Nameservers: []string{"10.255.255.254"}})
	for _, f := range files {
		unix.Close(f)
	}
	return err
}

// nameservers are the host's nameserver addresses (glibc reads at most
// three), or loopback, where glibc looks when there are none. Link-local
// IPv6 addresses (which need an interface) are left out.
func nameservers() []string {
	data, err := os.ReadFile("/etc/resolv.conf")
	var out []string
	if err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() && len(out) < 3 {
			f := strings.Fields(sc.Text())
			if len(f) < 2 || f[0] != "nameserver" {
				continue
			}
			a, err := netip.ParseAddr(f[1])
			if err != nil || a.Zone() != "" || a.IsLinkLocalUnicast() {
				continue
			}
			out = append(out, a.Unmap().String())
		}
	}
	if len(out) == 0 {
		out = []string{"127.0.0.1", "::1"}
	}
	return out
}

// relayDoorV4 is the address of the relay's IPv4 listener inside the
// sandbox: on loopback (127.0.0.0/8 is all loopback's), but not 127.0.0.1,
// which servers mean for a service of the host's. A connect to the door
// itself is refused and is no contact, so on 127.0.0.1 a host service
// whose port the door drew too was out of reach.
const relayDoorV4 = "127.255.255.254"

// relayDoorV6 is the address of the relay's IPv6 listener inside the
// sandbox, put on loopback there: IPv6 has one loopback address, ::1,
// which servers mean for a service of the host's, so the door is in
// RFC 6666's discard-only block (100::/64), where no server means a
// destination of any kind.
const relayDoorV6 = "100::1"

// setUpNetwork is the child's part, in its new network namespace: loopback
// up, each nameserver's address on it, a DNS socket (UDP and TCP) at each,
// the relay's listeners. It returns the descriptors and their roles.
func setUpNetwork(s netSpec) ([]int, []string, error) {
	if err := loopbackUp(); err != nil {
		return nil, nil, fmt.Errorf("bringing loopback up: %w", err)
	}
	var files []int
	var roles []string
	keep := func(f *os.File, role string) error {
		fd, err := unix.Dup(int(f.Fd()))
		f.Close()
		if err != nil {
			return err
		}
		unix.CloseOnExec(fd)
		files = append(files, fd)
		roles = append(roles, role)
		return nil
	}
	fail := func(err error) ([]int, []string, error) {
		for _, f := range files {
			unix.Close(f)
		}
		return nil, nil, err
	}
	for _, ns := range s.Nameservers {
		a, err := netip.ParseAddr(ns)
		if err != nil {
			continue
		}
		if !a.IsLoopback() {
			if err := addLoopbackAddr(a); err != nil {
				return fail(fmt.Errorf("putting %s on loopback: %w", a, err))
			}
		}
		at := netip.AddrPortFrom(a, 53).String()
		pc, err := net.ListenPacket("udp", at)
		if err != nil {
			return fail(fmt.Errorf("a DNS socket at %s: %w", at, err))
		}
		f, _ := pc.(*net.UDPConn).File()
		pc.Close()
		if err := keep(f, roleDNSUDP+" "+at); err != nil {
			return fail(err)
		}
		l, err := net.Listen("tcp", at)
		if err != nil {
			return fail(fmt.Errorf("a DNS listener at %s: %w", at, err))
		}
		f, _ = l.(*net.TCPListener).File()
		l.Close()
		if err := keep(f, roleDNSTCP+" "+at); err != nil {
			return fail(err)
		}
	}
	if err := addLoopbackAddr(netip.MustParseAddr(relayDoorV6)); err != nil {
		return fail(fmt.Errorf("putting %s on loopback: %w", relayDoorV6, err))
	}
	for _, at := range []string{relayDoorV4 + ":0", "[" + relayDoorV6 + "]:0"} { // see relayDoorV4, relayDoorV6
		l, err := net.Listen("tcp", at)
		if err != nil {
			return fail(fmt.Errorf("the relay's listener at %s: %w", at, err))
		}
		f, _ := l.(*net.TCPListener).File()
		addr := l.Addr().String()
		l.Close()
		if err := keep(f, roleRelay+" "+addr); err != nil {
			return fail(err)
		}
	}
	diag, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return fail(fmt.Errorf("a socket-diagnostics socket: %w", err))
	}
	files = append(files, diag)
	roles = append(roles, roleDiag)
	// What it had in its namespace to do this, the server does not get.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("dropping ambient capabilities: %w", err))
	}
	return files, roles, nil
}

// ifreqFlags is struct ifreq with its flags member.
type ifreqFlags struct {
	name  [unix.IFNAMSIZ]byte
	flags uint16
	_     [22]byte
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var r ifreqFlags
	copy(r.name[:], "lo")
	if err := ioctl(fd, unix.SIOCGIFFLAGS, unsafe.Pointer(&r)); err != nil {
		return err
	}
	r.flags |= unix.IFF_UP
	return ioctl(fd, unix.SIOCSIFFLAGS, unsafe.Pointer(&r))
}

// addLoopbackAddr puts a (a host address: /32 or /128) on loopback, with
// a netlink RTM_NEWADDR.
func addLoopbackAddr(a netip.Addr) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return err
	}
	family, bits := unix.AF_INET, 32
	if a.Is6() {
		family, bits = unix.AF_INET6, 128
	}
	raw := a.AsSlice()
	attr := func(typ uint16, data []byte) []byte {
		b := make([]byte, unix.SizeofRtAttr, unix.SizeofRtAttr+len(data)+3)
		binary.NativeEndian.PutUint16(b[0:], uint16(unix.SizeofRtAttr+len(data)))
		binary.NativeEndian.PutUint16(b[2:], typ)
		b = append(b, data...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	body := make([]byte, unix.SizeofIfAddrmsg)
	body[0] = byte(family)
	body[1] = byte(bits)
	// No duplicate address detection: an IPv6 address stays tentative
	// until it is done, and a bind to it meanwhile fails (EADDRNOTAVAIL,
	// a start in a few); on loopback, alone in its namespace, there is
	// nothing to detect.
	body[2] = unix.IFA_F_NODAD
	body[3] = unix.RT_SCOPE_HOST
	binary.NativeEndian.PutUint32(body[4:], uint32(lo.Index))
	body = append(body, attr(unix.IFA_LOCAL, raw)...)
	body = append(body, attr(unix.IFA_ADDRESS, raw)...)
	msg := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(body))
	binary.NativeEndian.PutUint32(msg[0:], uint32(unix.SizeofNlMsghdr+len(body)))
	binary.NativeEndian.PutUint16(msg[4:], unix.RTM_NEWADDR)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	binary.NativeEndian.PutUint32(msg[8:], 1)
	msg = append(msg, body...)
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return err
	}
	if n < unix.SizeofNlMsghdr+4 || binary.NativeEndian.Uint16(buf[4:]) != unix.NLMSG_ERROR {
		return errors.New("no answer from netlink")
	}
	if e := int32(binary.NativeEndian.Uint32(buf[unix.SizeofNlMsghdr:])); e != 0 && unix.Errno(-e) != unix.EEXIST {
		return unix.Errno(-e)
	}
	return nil
}
