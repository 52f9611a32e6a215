package main

// The network ops of the tests of a server's network setting (mcp's
// netwatch tests, the root package's, the benchmarks): what the kernel,
// the filter or Rootkeeper answered.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// netOp does the network ops; ok is false for an op it does not know.
func netOp(op, path string) (got string, ok bool, err error) {
	switch op {
	case "udp": // HOST:PORT (IPv4 or [IPv6]): a connected datagram socket sends "leak"
		err = udpTo(path)
	case "names": // SUFFIX:PORT,N: N connects to n0.SUFFIX … n{N-1}.SUFFIX; got: their p50,p99,max in µs and how many failed
		got, err = names(path)
	case "peerecho": // HOST:PORT: connect, send a line, read it back; got: the answer and the peer the socket says it has
		got, err = peerEcho(path, nil)
	case "boundecho": // HOST:PORT: the same from a socket bound to 127.0.0.1 first
		got, err = peerEcho(path, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	case "boundecho6": // HOST:PORT: the same from a socket bound to ::1 first
		got, err = peerEcho(path, &net.TCPAddr{IP: net.IPv6loopback})
	case "disconnect": // HOST:PORT: connect, then try to make the socket another one: got: what each try answered
		got, err = disconnect(path)
	case "connectrace": // ALLOWED,DENIED,N: N connects to an address another thread keeps swapping between the two; got: how many connected
		got, err = connectRace(path)
	default:
		return "", false, nil
	}
	return got, true, err
}

func udpTo(addr string) error {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte("leak"))
	return err
}

// names connects to N names once each, timing each connect (lookup
// included) as the server sees it.
func names(spec string) (string, error) {
	hostPort, count, ok := strings.Cut(spec, ",")
	n, err := strconv.Atoi(count)
	i := strings.LastIndexByte(hostPort, ':')
	if !ok || err != nil || i < 0 {
		return "", fmt.Errorf("names wants SUFFIX:PORT,N, not %q", spec)
	}
	suffix, port := hostPort[:i], hostPort[i+1:]
	took := make([]time.Duration, 0, n)
	failed := 0
	for k := range n {
		start := time.Now()
		c, err := net.DialTimeout("tcp", net.JoinHostPort(fmt.Sprintf("n%d.%s", k, suffix), port), 10*time.Second)
		took = append(took, time.Since(start))
		if err != nil {
			failed++
			continue
		}
		c.Close()
	}
	sort.Slice(took, func(a, b int) bool { return took[a] < took[b] })
	at := func(p float64) int64 { return took[min(len(took)-1, int(p*float64(len(took))))].Microseconds() }
	return fmt.Sprintf("%d,%d,%d,%d", at(0.5), at(0.99), took[len(took)-1].Microseconds(), failed), nil
}

// peerEcho connects to addr (from local, when not nil), echoes a line,
// and says what came back and whom the socket says it is connected to.
func peerEcho(addr string, local *net.TCPAddr) (string, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	if local != nil {
		d.LocalAddr = local
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	line, err := echoLine(c)
	return line + " " + c.RemoteAddr().String(), err
}

// echoLine sends a line on c and reads the answer.
func echoLine(c net.Conn) (string, error) {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

// disconnect connects to addr, then tries, on the connected socket, what
// would make it a socket to bind or listen with or connect elsewhere: a
// disconnect (AF_UNSPEC), a second connect, and once the connection has
// ended a shutdown and a listen, and a bind. Got: each try's errno name
// ("ok" for none).
func disconnect(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return "", err
	}
	to := c.RemoteAddr().(*net.TCPAddr)
	name := func(err error) string {
		if err == nil {
			return "ok"
		}
		if e, ok := err.(unix.Errno); ok {
			return unix.ErrnoName(e)
		}
		return err.Error()
	}
	var tries []string
	raw.Control(func(fd uintptr) {
		unspec := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		_, _, e := unix.Syscall(unix.SYS_CONNECT, fd, uintptr(unsafe.Pointer(&unspec[0])), uintptr(len(unspec)))
		tries = append(tries, "unspec="+name(errnoOrNil(e)))
		again := &unix.SockaddrInet4{Port: to.Port, Addr: [4]byte(to.IP.To4())}
		tries = append(tries, "again="+name(unix.Connect(int(fd), again)))
	})
	// The connection ends by the peer's reset, which the socket reports
	// (POLLERR), its state closed: the peer (an echo server) answers a
	// line and closes, and a byte sent after its close is answered RST.
	if _, err := echoLine(c); err != nil {
		return "", err
	}
	if _, err := io.Copy(io.Discard, c); err != nil {
		return "", err
	}
	if _, err := c.Write([]byte("x")); err != nil {
		return "", err
	}
	raw.Control(func(fd uintptr) {
		unix.Poll([]unix.PollFd{{Fd: int32(fd)}}, 10000) // POLLERR is always asked
		unix.Shutdown(int(fd), unix.SHUT_RDWR)
		tries = append(tries, "listen="+name(unix.Listen(int(fd), 1)))
		tries = append(tries, "bind="+name(unix.Bind(int(fd), &unix.SockaddrInet4{})))
		if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err != nil {
			tries = append(tries, "state="+name(err))
		} else if info.State != unix.BPF_TCP_CLOSE {
			tries = append(tries, fmt.Sprintf("state=%d (not closed: the bind proves nothing)", info.State))
		}
	})
	return strings.Join(tries, " "), nil
}

func errnoOrNil(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// connectRace makes N connects of raw sockets to the sockaddr in one
// buffer while another thread keeps rewriting it between two addresses
// (IPv4), as a server racing the check of its connects would.
func connectRace(spec string) (string, error) {
	parts := strings.Split(spec, ",")
	if len(parts) != 3 {
		return "", fmt.Errorf("connectrace wants ALLOWED,DENIED,N, not %q", spec)
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil {
		return "", err
	}
	var words [2]uint64
	for i, at := range parts[:2] {
		ap, err := netip.ParseAddrPort(at)
		if err != nil || !ap.Addr().Is4() {
			return "", fmt.Errorf("connectrace wants IPv4 addresses, not %q", at)
		}
		var b [8]byte
		binary.NativeEndian.PutUint16(b[0:], unix.AF_INET)
		binary.BigEndian.PutUint16(b[2:], ap.Port())
		a := ap.Addr().As4()
		copy(b[4:], a[:])
		words[i] = binary.NativeEndian.Uint64(b[:])
	}
	var sa [2]uint64 // sockaddr_in: family, port and address in the first word
	sa[0] = words[0]
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
				atomic.StoreUint64(&sa[0], words[i%2])
			}
		}
	}()
	connected := 0
	for range n {
		s, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return "", err
		}
		_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(s), uintptr(unsafe.Pointer(&sa[0])), 16)
		if e == 0 {
			connected++
		}
		unix.Close(s)
	}
	return strconv.Itoa(connected), nil
}
