package sandboxnet

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"rootkeeper/app/apptest"
)

// nameserver is a DNS server on loopback (UDP and TCP, one port) that
// knows a few names; asked counts the names it was asked.
type nameserver struct {
	addr  netip.AddrPort
	mu    sync.Mutex
	asked map[string]int
}

var zone = map[string][]netip.Addr{
	"api.example.test.": {netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("2001:db8::7")},
	"cdn.example.test.": {netip.MustParseAddr("198.51.100.9")},
}

// udpAndTCP listens on one loopback port for UDP and TCP, as a nameserver
// does. The port is the UDP socket's, drawn by the kernel; when its TCP
// twin is in use (a connection of another test's, seen once in CI) it
// draws again.
func udpAndTCP(t *testing.T) (net.PacketConn, net.Listener) {
	t.Helper()
	for try := 0; ; try++ {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, l
		}
		pc.Close()
		if !errors.Is(err, syscall.EADDRINUSE) || try == 20 {
			t.Fatal(err)
		}
	}
}

func startNameserver(t *testing.T) *nameserver {
	t.Helper()
	pc, l := udpAndTCP(t)
	ns := &nameserver{addr: netip.MustParseAddrPort(pc.LocalAddr().String()), asked: map[string]int{}}
	t.Cleanup(func() { pc.Close(); l.Close() })
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			pc.WriteTo(ns.respond(buf[:n]), from)
		}
	}()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				q, err := readTCPMessage(c)
				if err == nil {
					writeTCPMessage(c, ns.respond(q))
				}
			}()
		}
	}()
	return ns
}

func (ns *nameserver) respond(q []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil {
		return nil
	}
	question, err := p.Question()
	if err != nil {
		return nil
	}
	ns.mu.Lock()
	ns.asked[question.Name.String()]++
	ns.mu.Unlock()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
	b.StartQuestions()
	b.Question(question)
	b.StartAnswers()
	for _, a := range zone[question.Name.String()] {
		rh := dnsmessage.ResourceHeader{Name: question.Name, Class: dnsmessage.ClassINET, TTL: 60}
		switch {
		case a.Is4() && question.Type == dnsmessage.TypeA:
			b.AResource(rh, dnsmessage.AResource{A: a.As4()})
		case a.Is6() && question.Type == dnsmessage.TypeAAAA:
			b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
	}
	msg, _ := b.Finish()
	return msg
}

func (ns *nameserver) askedFor(name string) int {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.asked[name+"."]
}

// lookup resolves name through the resolver served at addr, as Go's own
// resolver would from inside a sandbox whose nameserver is addr.
func lookup(addr, network, name string) ([]netip.Addr, error) {
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return res.LookupNetIP(ctx, "ip", name)
}

// TestResolverNamesWhatItAnswers: a lookup through the resolver (UDP and
// TCP) gets the nameserver's answer, and the resolver remembers which
// name answered each address; a name Lookup refuses is answered REFUSED
// and never reaches the nameserver.
func TestResolverNamesWhatItAnswers(t *testing.T) {
	ns := startNameserver(t)
	r := &Resolver{Upstream: []netip.AddrPort{ns.addr}, Lookup: func(name string) bool { return name != "evil.example.test" }}
	pc, l := udpAndTCP(t)
	defer pc.Close()
	defer l.Close()
	go r.ServeUDP(pc)
	go r.ServeTCP(l)

	for _, network := range []string{"udp", "tcp"} {
		addrs, err := lookup(pc.LocalAddr().String(), network, "api.example.test")
		if err != nil {
			t.Fatalf("%s lookup: %v", network, err)
		}
		if len(addrs) != 2 {
			t.Errorf("%s lookup: %v", network, addrs)
		}
	}
	for _, a := range zone["api.example.test."] {
		if got := r.NameOf(a); got != "api.example.test" {
			t.Errorf("NameOf(%s) = %q", a, got)
		}
	}
	if got := r.NameOf(netip.MustParseAddr("::ffff:203.0.113.7")); got != "api.example.test" {
		t.Errorf("a mapped address: %q", got)
	}
	if r.NameOf(netip.MustParseAddr("198.51.100.9")) != "" {
		t.Error("a name nobody looked up is known")
	}
	if _, err := lookup(pc.LocalAddr().String(), "udp", "evil.example.test"); err == nil {
		t.Error("a refused name resolved")
	}
	if n := ns.askedFor("evil.example.test"); n != 0 {
		t.Errorf("a refused name was sent to the nameserver %d times", n)
	}
}

// TestRelayCarriesWhatWasPaired: a connection to the relay is joined to
// the upstream connection paired with its address, both ways, ends
// included, whichever of the accept and the pairing comes first; one
// nobody pairs is closed.
func TestRelayCarriesWhatWasPaired(t *testing.T) {
	old := unclaimed
	unclaimed = 200 * time.Millisecond
	defer func() { unclaimed = old }()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	in, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := NewRelay(in)
	defer r.Close()
	relayAddr, ok := r.Addr(false)
	if !ok || !r.Listens(relayAddr) {
		t.Fatalf("relay address %v %v", relayAddr, ok)
	}
	for i, pairFirst := range []bool{true, false} {
		// The server's socket: bound first, as the observer knows it.
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}}
		up, err := net.Dial("tcp", echo.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		var c net.Conn
		if pairFirst {
			// Reserve a port, then pair it before the connect.
			probe, _ := net.Listen("tcp", "127.0.0.1:0")
			port := probe.Addr().(*net.TCPAddr).Port
			probe.Close()
			r.Pair(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)), up)
			d.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
			if c, err = d.Dial("tcp", relayAddr.String()); err != nil {
				t.Fatal(err)
			}
		} else {
			if c, err = d.Dial("tcp", relayAddr.String()); err != nil {
				t.Fatal(err)
			}
			r.Pair(netip.MustParseAddrPort(c.LocalAddr().String()), up)
		}
		msg := "hello " + strings.Repeat("x", i)
		c.Write([]byte(msg + "\n"))
		got, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || got != msg+"\n" {
			t.Errorf("pair first %v: echoed %q (%v)", pairFirst, got, err)
		}
		c.Close()
	}
	apptest.Eventually(t, "the relayed connections end", func() (bool, string) { return r.Carried() == 0, "" })

	// A connection nobody pairs is closed.
	c, err := net.Dial("tcp", relayAddr.String())
	if err != nil {
		t.Fatal(err)
	}
	var closed atomic.Bool
	go func() {
		b := make([]byte, 1)
		if _, err := c.Read(b); err != nil {
			closed.Store(true)
		}
	}()
	apptest.Eventually(t, "an unpaired connection closed", func() (bool, string) { return closed.Load(), "" })
}
