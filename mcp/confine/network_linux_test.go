package confine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/sys/unix"

	"rootkeeper/app/apptest"
)

// testNetwork records what a confined server contacted and looked up,
// and decides each with allow.
type testNetwork struct {
	allow    func(Contact) bool
	mu       sync.Mutex
	contacts []Contact
	lookups  []string
}

func (n *testNetwork) Contact(_ context.Context, c Contact) bool {
	n.mu.Lock()
	n.contacts = append(n.contacts, c)
	n.mu.Unlock()
	return n.allow(c)
}

func (n *testNetwork) Lookup(name string) bool {
	n.mu.Lock()
	n.lookups = append(n.lookups, name)
	n.mu.Unlock()
	return !strings.HasPrefix(name, "refused.")
}

// echoServer listens on loopback (of this, the host's, network) and
// answers each line with "pong"; accepted counts its connections.
type echoServer struct {
	l        net.Listener
	mu       sync.Mutex
	accepted int
}

func startEcho(t *testing.T, network, at string) *echoServer {
	t.Helper()
	l, err := net.Listen(network, at)
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{l: l}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			e.mu.Lock()
			e.accepted++
			e.mu.Unlock()
			go func() {
				defer c.Close()
				if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
					c.Write([]byte("pong\n"))
				}
			}()
		}
	}()
	return e
}

func (e *echoServer) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.accepted
}

// testDNS is a nameserver on loopback that answers every name under
// example.test with 127.0.0.3.
func testDNS(t *testing.T) netip.AddrPort {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
			b.StartQuestions()
			b.Question(q)
			b.StartAnswers()
			switch {
			case q.Name.String() == "v6.example.test.":
				// IPv6 only: the host's ::1.
				if q.Type == dnsmessage.TypeAAAA {
					b.AAAAResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AAAAResource{AAAA: netip.IPv6Loopback().As16()})
				}
			case strings.HasSuffix(q.Name.String(), ".example.test.") && q.Type == dnsmessage.TypeA:
				b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: [4]byte{127, 0, 0, 3}})
			}
			msg, _ := b.Finish()
			pc.WriteTo(msg, from)
		}
	}()
	return netip.MustParseAddrPort(pc.LocalAddr().String())
}

// nosyEnv names nosy for a test run again as nobody, who cannot build it.
const nosyEnv = "ROOTKEEPER_TEST_NOSY"

// runNetworked runs nosy -try ops confined and observed under p, its
// network decided by n.
func runNetworked(t *testing.T, p Policy, n Network, ops ...string) []outcome {
	t.Helper()
	prog := os.Getenv(nosyEnv)
	if prog == "" {
		prog = nosy(t)
	}
	cmd := exec.Command(prog, append([]string{"-try"}, ops...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	obs := observed(t, cmd, p, n, nil)
	err := cmd.Wait()
	obs.Close()
	if err != nil {
		t.Fatalf("%v: %v; stderr: %s", cmd.Args, err, stderr.String())
	}
	res := outcomes(t, &stdout)
	if len(res) != len(ops) {
		t.Fatalf("%d results for %d operations: %+v; stderr: %s", len(res), len(ops), res, stderr.String())
	}
	return res
}

// TestNetworkOfItsOwn: an observed confined server has a network of its
// own. A TCP connect past it is a contact, named by the name the server
// looked up through Rootkeeper's resolver; allowed, it reaches the
// destination (on the host's loopback) both ways, on a socket of the
// host's network handed to it (through the relay for a socket it bound
// first), which it cannot turn into another;
// refused, nothing reaches it. A connect to what the server itself
// listens on stays inside and is no contact; a datagram sent with an
// address leaves nothing outside; a lookup the Network refuses fails.
func TestNetworkOfItsOwn(t *testing.T) { networkOfItsOwn(t) }

// TestNetworkOfItsOwnAsAnOrdinaryUser: the same for a person who is not
// root, whose server's network namespace needs a user namespace of its
// own (mapping the person to themselves).
func TestNetworkOfItsOwnAsAnOrdinaryUser(t *testing.T) {
	if os.Getenv(nosyEnv) == "" && apptest.Privileged() {
		dir := apptest.NobodyDir(t)
		bin := filepath.Join(dir, "nosy")
		data, err := os.ReadFile(nosy(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv(nosyEnv, bin)
	}
	if !apptest.AsNobody(t) {
		return
	}
	if os.Geteuid() == 0 {
		t.Fatal("still root")
	}
	networkOfItsOwn(t)
}

func networkOfItsOwn(t *testing.T) {
	needLandlock(t)
	if ok, why := Isolation(); !ok {
		t.Fatalf("no network of its own here: %s", why)
	}
	named := startEcho(t, "tcp", "127.0.0.3:0")
	port := named.l.Addr().(*net.TCPAddr).Port
	named6 := startEcho(t, "tcp", "[::1]:0")
	at6 := net.JoinHostPort("v6.example.test", strconv.Itoa(named6.l.Addr().(*net.TCPAddr).Port))
	echo := startEcho(t, "tcp", "127.0.0.1:0")
	other := echo.l.Addr().String()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	base := t.TempDir()
	p := Policy{Roots: []string{filepath.Join(base, "root")}, Temp: filepath.Join(base, "tmp"), Upstream: []netip.AddrPort{testDNS(t)}}
	os.MkdirAll(p.Roots[0], 0o755)
	at := func(host string) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

	n := &testNetwork{allow: func(c Contact) bool { return c.Name == "api.example.test" || c.Name == "v6.example.test" }}
	res := runNetworked(t, p, n,
		"tcpecho:"+at("api.example.test"),   // 0: looked up, allowed
		"tcpecho:"+other,                    // 1: no name: refused
		"selfconnect:",                      // 2: inside
		"udpsend:"+udp.LocalAddr().String(), // 3: stays inside
		"lookup:refused.example.test",       // 4: lookup refused
		"peerecho:"+at("api.example.test"),  // 5: handed
		"boundecho:"+at("api.example.test"), // 6: bound first: relayed
		"disconnect:"+at("api.example.test"),
		"boundecho6:"+at6, // 8: bound first, IPv6: relayed
	)
	if !res[0].OK || res[0].Got != "pong" {
		t.Errorf("an allowed connect: %+v", res[0])
	}
	// Handed, the server's socket is connected to the destination itself;
	// relayed, to the relay inside its sandbox.
	if want := "pong " + at("127.0.0.3"); !res[5].OK || res[5].Got != want {
		t.Errorf("a connect handed a socket of the host's network: %+v, want %q", res[5], want)
	}
	if got, relayed := strings.CutPrefix(res[6].Got, "pong "); !res[6].OK || !relayed || got == at("127.0.0.3") {
		t.Errorf("a socket bound before its connect, relayed: %+v", res[6])
	} else if door, err := netip.ParseAddrPort(got); err != nil || door.Addr() == netip.MustParseAddr("127.0.0.1") {
		// The relay's door is never where a server means the host's
		// loopback service: a host's 127.0.0.1 port that the door drew
		// too was refused as the door, no contact (seen once in CI).
		t.Errorf("the relay's door is at %s, want it off 127.0.0.1", got)
	}
	// Nor on ::1, IPv6's one loopback address.
	if got, relayed := strings.CutPrefix(res[8].Got, "pong "); !res[8].OK || !relayed {
		t.Errorf("an IPv6 socket bound before its connect, relayed: %+v", res[8])
	} else if door, err := netip.ParseAddrPort(got); err != nil || door.Addr() == netip.IPv6Loopback() {
		t.Errorf("the relay's IPv6 door is at %s, want it off ::1", got)
	}
	// A handed socket stays connected to what was allowed: no disconnect,
	// no second connect, no listening or binding on the host's network.
	if want := "unspec=EACCES again=EISCONN listen=EINVAL bind=EINVAL"; !res[7].OK || res[7].Got != want {
		t.Errorf("a handed socket made another: %+v, want %q", res[7], want)
	}
	if res[1].OK || !strings.Contains(res[1].Err, "permission denied") {
		t.Errorf("a refused connect: %+v", res[1])
	}
	if !res[2].OK || res[2].Got != "inside" {
		t.Errorf("a connect to itself inside its sandbox: %+v", res[2])
	}
	if named.count() != 4 || echo.count() != 0 {
		t.Errorf("the destinations saw %d and %d connections, want the one allowed", named.count(), echo.count())
	}
	udp.SetReadDeadline(time.Now())
	if _, _, err := udp.ReadFrom(make([]byte, 16)); err == nil {
		t.Error("a datagram sent from inside the sandbox reached the host's loopback")
	}
	if res[4].OK {
		t.Errorf("a refused lookup resolved: %+v", res[4])
	}
	if len(n.contacts) != 6 {
		t.Fatalf("contacts %+v, want the six connects past the sandbox", n.contacts)
	}
	if c := n.contacts[0]; c.Proto != "tcp" || c.Addr != netip.MustParseAddrPort(at("127.0.0.3")) || c.Name != "api.example.test" || c.PID == 0 {
		t.Errorf("the named contact: %+v", c)
	}
	if c := n.contacts[1]; c.Addr != netip.MustParseAddrPort(other) || c.Name != "" {
		t.Errorf("the unnamed contact: %+v, want %s", c, other)
	}
}

// TestNetworkOff: a server whose network is off has no inet socket at
// all, loopback included; no contact is told.
func TestNetworkOff(t *testing.T) {
	needLandlock(t)
	echo := startEcho(t, "tcp", "127.0.0.1:0")
	base := t.TempDir()
	p := Policy{Roots: []string{filepath.Join(base, "root")}, Temp: filepath.Join(base, "tmp"), Network: NetworkOff}
	n := &testNetwork{allow: func(Contact) bool { return true }}
	res := runNetworked(t, p, n, "tcpecho:"+echo.l.Addr().String(), "udpsend:127.0.0.1:9", "selfconnect:")
	for _, r := range res {
		if r.OK || !strings.Contains(r.Err, "permission denied") {
			t.Errorf("%s with the network off: %+v", r.Op, r)
		}
	}
	if echo.count() != 0 || len(n.contacts) != 0 {
		t.Errorf("with the network off: %d connections, contacts %+v", echo.count(), n.contacts)
	}
}

// TestUnixSocketContact: a unix socket past the server's folders is a
// contact; allowed, Rootkeeper connects it there; refused, it fails.
func TestUnixSocketContact(t *testing.T) {
	needLandlock(t)
	base := t.TempDir()
	sock := filepath.Join(base, "run", "db.sock")
	os.MkdirAll(filepath.Dir(sock), 0o755)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	p := Policy{Roots: []string{filepath.Join(base, "root")}, Temp: filepath.Join(base, "tmp")}
	for _, allow := range []bool{true, false} {
		n := &testNetwork{allow: func(c Contact) bool { return allow && c.Proto == "unix" && c.Path == sock }}
		res := runNetworked(t, p, n, "connect:"+sock)
		if res[0].OK != allow {
			t.Errorf("allowed %v: %+v", allow, res[0])
		}
		if len(n.contacts) != 1 || n.contacts[0].Path != sock {
			t.Errorf("contacts %+v", n.contacts)
		}
	}
}

// BenchmarkWatchedConnect: 200 connects (each with one line sent and
// answered) by a confined server to a listener on the host's loopback,
// timed by the server itself: unobserved (the anchor: a plain connect, the
// host's network), and observed with a network of its own (each connect a
// contact, dialled by Rootkeeper and relayed). Alternated, each run one
// server; it reports the medians of the time a connect takes and what
// watching adds to it.
func BenchmarkWatchedConnect(b *testing.B) {
	echo := startEchoB(b)
	base := b.TempDir()
	p := Policy{Roots: []string{base}, Temp: filepath.Join(b.TempDir(), "tmp")}
	op := "connects:" + echo + ",200"
	run := func(watched bool) time.Duration {
		cmd := exec.Command(nosy(b), "-try", op)
		var obs *Observer
		var err error
		if watched {
			_, obs, err = WrapObserved(cmd, p)
			if obs != nil {
				obs.Network = &testNetwork{allow: func(Contact) bool { return true }}
			}
		} else {
			_, err = Wrap(cmd, p)
		}
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := Start(cmd); err != nil {
			b.Fatal(err)
		}
		if obs != nil {
			obs.Start(nil)
		}
		err = cmd.Wait()
		if obs != nil {
			obs.Close()
		}
		var res outcome
		if err != nil || json.Unmarshal(out.Bytes(), &res) != nil || !res.OK {
			b.Fatalf("watched=%v: %s %v", watched, out.String(), err)
		}
		ns, _ := strconv.ParseInt(res.Got, 10, 64)
		return time.Duration(ns)
	}
	var plain, watched []time.Duration
	for i := 0; b.Loop(); i++ {
		for _, w := range []bool{i%2 == 0, i%2 != 0} {
			if d := run(w); w {
				watched = append(watched, d)
			} else {
				plain = append(plain, d)
			}
		}
	}
	pm, wm := apptest.Median(plain), apptest.Median(watched)
	b.ReportMetric(float64(pm.Microseconds()), "unwatched-µs/connect")
	b.ReportMetric(float64(wm.Microseconds()), "watched-µs/connect")
	b.ReportMetric(float64((wm - pm).Microseconds()), "added-µs/connect")
}

func startEchoB(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
					c.Write([]byte("pong\n"))
				}
			}()
		}
	}()
	return l.Addr().String()
}

// TestListenerAt: the kernel's lookup of what a connection would reach, in
// this test's own namespace: a listener at its address, a dual-stack IPv6
// listener for an IPv4 address, not an IPv6-only one, not a port where an
// established connection is but nothing listens, not a closed port.
func TestListenerAt(t *testing.T) {
	diag, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(diag)
	listen := func(network, at string) netip.AddrPort {
		l, err := net.Listen(network, at)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return netip.MustParseAddrPort(l.Addr().String())
	}
	v4 := listen("tcp4", "127.0.0.1:0")
	dual := listen("tcp", "[::]:0")
	v6only := listen("tcp6", "[::1]:0")
	c, err := net.Dial("tcp", v4.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	client := netip.MustParseAddrPort(c.LocalAddr().String())
	for _, tc := range []struct {
		dest netip.AddrPort
		want bool
	}{
		{v4, true},
		{netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), v4.Port()), false},
		{netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), dual.Port()), true},
		{netip.AddrPortFrom(netip.MustParseAddr("::1"), dual.Port()), true},
		{v6only, true},
		{netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), v6only.Port()), false},
		{client, false},
	} {
		if got := listenerAt(diag, tc.dest); got != tc.want {
			t.Errorf("listenerAt(%s) = %v, want %v", tc.dest, got, tc.want)
		}
	}
}

// TestConnectWaitingHoldsNothingElse: a connect that waits (here for a
// person, as long as the test holds it) is done by the goroutine that
// received it, and the server's other calls are received by another
// meanwhile: a process of the server writes a file, its open seen and
// answered, while the connect of another is still undecided.
func TestConnectWaitingHoldsNothingElse(t *testing.T) {
	needLandlock(t)
	echo := startEcho(t, "tcp", "127.0.0.1:0")
	base := t.TempDir()
	root := filepath.Join(base, "root")
	os.MkdirAll(root, 0o755)
	p := Policy{Roots: []string{root}, Temp: filepath.Join(base, "tmp")}
	contacted, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	n := &testNetwork{allow: func(Contact) bool {
		close(contacted)
		<-release
		return true
	}}
	cmd := exec.Command(nosy(t), "-try", "spawn:tcpecho:"+echo.l.Addr().String(),
		"waitfor:"+filepath.Join(root, "go"), "write:"+filepath.Join(root, "after"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	observed(t, cmd, p, n, nil)
	defer once.Do(func() { close(release) }) // before the observer's Close, which waits for the connect
	select {
	case <-contacted:
	case <-time.After(apptest.Patience):
		t.Fatalf("no contact; output: %s", out.String())
	}
	if err := os.WriteFile(filepath.Join(root, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	apptest.Eventually(t, "the server's write while its connect waits", func() (bool, string) {
		_, err := os.Stat(filepath.Join(root, "after"))
		return err == nil, fmt.Sprint(err)
	})
	once.Do(func() { close(release) })
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	apptest.Eventually(t, "the connect let through", func() (bool, string) { return echo.count() == 1, out.String() })
}

// TestConnectAddressSwapped: a server that keeps rewriting the address
// of its connects between one allowed and one not (another thread, the
// same memory) reaches only the one allowed: Rootkeeper connects the
// address it read and decided, never the one in the server's memory
// after.
func TestConnectAddressSwapped(t *testing.T) {
	needLandlock(t)
	allowed := startEcho(t, "tcp", "127.0.0.3:0")
	denied := startEcho(t, "tcp", "127.0.0.4:0")
	base := t.TempDir()
	p := Policy{Roots: []string{filepath.Join(base, "root")}, Temp: filepath.Join(base, "tmp")}
	os.MkdirAll(p.Roots[0], 0o755)
	ok := netip.MustParseAddrPort(allowed.l.Addr().String())
	n := &testNetwork{allow: func(c Contact) bool { return c.Addr == ok }}
	res := runNetworked(t, p, n, "connectrace:"+ok.String()+","+denied.l.Addr().String()+",300")
	if !res[0].OK {
		t.Fatalf("%+v", res[0])
	}
	apptest.Eventually(t, "every connection made accepted", func() (bool, string) {
		return strconv.Itoa(allowed.count()+denied.count()) == res[0].Got, fmt.Sprintf("%d+%d accepted, %s connected", allowed.count(), denied.count(), res[0].Got)
	})
	if denied.count() != 0 {
		t.Errorf("the address not allowed was reached %d times", denied.count())
	}
	refused := 0
	for _, c := range n.contacts {
		if c.Addr != ok {
			refused++
		}
	}
	// The race was run: both addresses were read, and some connects made.
	if refused == 0 || res[0].Got == "0" {
		t.Errorf("no race: %d contacts refused, %s connected", refused, res[0].Got)
	}
}
