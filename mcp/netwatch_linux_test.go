package mcp

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/audit"
	"rootkeeper/mcp/confine"
)

// listener is a TCP echo server (a line in, "pong" out) or a UDP socket
// on the host's loopback that counts what reached it.
type listener struct {
	addr string
	mu   sync.Mutex
	hits int
}

func (l *listener) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hits
}

func (l *listener) hit() {
	l.mu.Lock()
	l.hits++
	l.mu.Unlock()
}

// listenTCP is an echo server at (host, any port) on this machine.
func listenTCP(t testing.TB, host string) *listener {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	l := &listener{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.hit()
			go func() {
				defer c.Close()
				if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
					c.Write([]byte("pong\n"))
				}
			}()
		}
	}()
	return l
}

// listenUDP counts the datagrams that reach (host, any port).
func listenUDP(t testing.TB, host string) *listener {
	t.Helper()
	pc, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	l := &listener{addr: pc.LocalAddr().String()}
	go func() {
		buf := make([]byte, 512)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			l.hit()
		}
	}()
	return l
}

// testNameserver answers every name under example.test with 127.0.0.3
// (A) and nothing else, on the host's loopback; the confined servers'
// lookups go to it (EnvNameservers).
func testNameserver(t testing.TB) {
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
			if strings.HasSuffix(q.Name.String(), ".example.test.") && q.Type == dnsmessage.TypeA {
				b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: [4]byte{127, 0, 0, 3}})
			}
			msg, _ := b.Finish()
			pc.WriteTo(msg, from)
		}
	}()
	os.Setenv(EnvNameservers, pc.LocalAddr().String())
	t.Cleanup(func() { os.Unsetenv(EnvNameservers) })
}

// netEnv runs nosy managed and confined, observed, with network n; with
// asking a person can be asked (a connect waits up to the longest wait),
// without nobody can.
func netEnv(t *testing.T, n *app.NetworkSetting, asking bool) *testEnv {
	t.Helper()
	needLandlock(t)
	if ok, why := confine.Isolation(); !ok {
		t.Fatalf("no network of its own for a confined server here: %s", why)
	}
	testNameserver(t)
	bin := nosyServer(t)
	e := newEnv(t)
	root := mkRoot(t, "granted")
	e.update(func(s *app.State) error {
		s.Settings = &app.Settings{ReachWait: int(app.MaxReachWait / time.Second)}
		// Stored as every server is (PutServer); n nil: stored before
		// there was a setting.
		if _, err := s.PutServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: bin, Confine: true, Network: n},
			app.PutOptions{Given: app.SetConfine | app.SetNetwork}); err != nil {
			return err
		}
		return nil
	})
	e.addRoots(root)
	e.grant("nosy", root)
	opts := e.fastOptions()
	opts.CanAsk = func() bool { return asking }
	e.start(opts)
	e.waitConnected("nosy")
	return e
}

// record is nosy's record of destinations as published.
func (e *testEnv) record() app.NetworkRecord { return e.core.Snapshot().Network["nosy"] }

// waitReached waits until nosy's record holds dest, and returns it.
func (e *testEnv) waitReached(dest string) app.Reached {
	e.t.Helper()
	var got app.Reached
	apptest.Eventually(e.t, "the record to hold "+dest, func() (bool, string) {
		for _, d := range e.record().Destinations {
			if d.Dest == dest {
				got = d
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", e.record())
	})
	return got
}

// TestNetworkOffReachesNothing: with its network off a confined server
// reaches nothing outside its sandbox — TCP and UDP, 127.0.0.1 and ::1 —
// and a unix socket past its folders is refused without a question.
func TestNetworkOffReachesNothing(t *testing.T) {
	e := netEnv(t, &app.NetworkSetting{Mode: app.NetworkOff}, true)
	tcp4, tcp6 := listenTCP(t, "127.0.0.1"), listenTCP(t, "::1")
	udp4, udp6 := listenUDP(t, "127.0.0.1"), listenUDP(t, "::1")
	for _, try := range [][2]string{{"tcpecho", tcp4.addr}, {"tcpecho", tcp6.addr}, {"udp", udp4.addr}, {"udp", udp6.addr}, {"lookup", "api.example.test"}} {
		if res := nosyTry(t, e, "nosy", try[0], try[1]); res.OK {
			t.Errorf("%s %s with its network off: %+v", try[0], try[1], res)
		}
	}
	sock := filepath.Join(t.TempDir(), "db.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if res := nosyTry(t, e, "nosy", "connect", sock); res.OK || !strings.Contains(res.Err, "permission denied") {
		t.Errorf("a unix socket past its folders with its network off: %+v", res)
	}
	if n := tcp4.count() + tcp6.count() + udp4.count() + udp6.count(); n != 0 {
		t.Errorf("%d connections or datagrams reached the host's loopback", n)
	}
	if reqs := e.core.Snapshot().State.RequestsFor("nosy"); len(reqs) != 0 {
		t.Errorf("off asked: %+v", reqs)
	}
	// The socket is recorded, refused; nothing else was ever contacted.
	d := e.waitReached("unix:" + sock)
	if d.Allowed || d.Refused != 1 || len(e.record().Destinations) != 1 {
		t.Errorf("the record: %+v", e.record())
	}
}

// TestNetworkAskWithNobodyRefusesAtOnce: in mode ask with nobody to ask,
// a connect to a new destination is refused at once, recorded in the
// record and as a request for the person, and audited as the request it
// raised; the destination saw nothing.
func TestNetworkAskWithNobodyRefusesAtOnce(t *testing.T) {
	e := netEnv(t, &app.NetworkSetting{Mode: app.NetworkAsk}, false)
	tcp6 := listenTCP(t, "::1")
	if res := nosyTry(t, e, "nosy", "tcpecho", tcp6.addr); res.OK || !strings.Contains(res.Err, "permission denied") {
		t.Fatalf("asked of nobody: %+v", res)
	}
	dest := netip.MustParseAddrPort(tcp6.addr).String()
	var r app.Request
	apptest.Eventually(t, "the request for "+dest, func() (bool, string) {
		var ok bool
		r, ok = e.core.Snapshot().State.Request("nosy", dest)
		return ok, fmt.Sprintf("%+v", e.core.Snapshot().State.Requests)
	})
	if r.From != app.FromNetwork || !r.Unasked || len(r.Calls) != 0 || r.Op != app.OpConnect {
		t.Errorf("the request: %+v", r)
	}
	if d := e.waitReached(dest); d.Allowed || d.Port != int(netip.MustParseAddrPort(tcp6.addr).Port()) || d.Address != "::1" {
		t.Errorf("the record: %+v", d)
	}
	if tcp6.count() != 0 {
		t.Error("the destination was reached")
	}
	// Asked of nobody before: refused again, no second request.
	if res := nosyTry(t, e, "nosy", "tcpecho", tcp6.addr); res.OK {
		t.Errorf("the second connect: %+v", res)
	}
	e.shutdown()
	entries := readAudit(t, e.dir)
	var network []audit.Entry
	for _, x := range entries {
		if x.Via == audit.ViaNetwork {
			network = append(network, x)
		}
	}
	if len(network) == 0 || network[0].Tried != dest || network[0].Decided != audit.ReachUnasked || !network[0].Request {
		t.Errorf("the audit trail's network lines: %+v", network)
	}
}

// readAudit is the trail and the noise of the state folder dir, merged.
func readAudit(t *testing.T, dir string) []audit.Entry {
	t.Helper()
	entries, err := audit.Read(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// TestNetworkAskAllowOnce: in mode ask with someone to ask, a connect
// waits; allow once lets exactly that connect through (the same process:
// no restart) and allows nothing more; allow always lets the next ones
// through; deny is remembered.
func TestNetworkAskAllowOnce(t *testing.T) {
	e := netEnv(t, &app.NetworkSetting{Mode: app.NetworkAsk}, true)
	pid := e.status("nosy").PID
	echo := listenTCP(t, "127.0.0.1")
	dest := echo.addr
	waitConnects := func(n int) app.Request {
		var r app.Request
		apptest.Eventually(t, fmt.Sprintf("%d connect(s) waiting on %s", n, dest), func() (bool, string) {
			var ok bool
			r, ok = e.core.Snapshot().State.Request("nosy", dest)
			return ok && len(r.Waiting(time.Now())) == n, fmt.Sprintf("%+v", r)
		})
		return r
	}
	got := tryAsync(t, e, "tcpecho", dest)
	r := waitConnects(1)
	q := app.ReachQuestionOf(r, time.Now(), nil)
	if q.Default != app.ReachDeny || !q.Once {
		t.Errorf("the question: %+v", q)
	}
	e.update(func(s *app.State) error {
		_, err := s.GrantOnce("nosy", dest, q.OnceIDs(), app.ByDialog, time.Now().UTC())
		return err
	})
	if res := <-got; !res.OK || res.Got != "pong" {
		t.Fatalf("allowed once: %+v", res)
	}
	if now := e.status("nosy").PID; now != pid {
		t.Errorf("allow once restarted the server: pid %d, then %d", pid, now)
	}
	if echo.count() != 1 {
		t.Errorf("the destination saw %d connections, want the one allowed once", echo.count())
	}
	// The next connect asks again; allow always lets it and the rest
	// through, without a restart.
	got = tryAsync(t, e, "tcpecho", dest)
	r = waitConnects(1)
	e.update(func(s *app.State) error { return s.NetworkAnswer(r, true, "") })
	if res := <-got; !res.OK {
		t.Fatalf("allowed always: %+v", res)
	}
	if res := nosyTry(t, e, "nosy", "tcpecho", dest); !res.OK {
		t.Errorf("after allow always: %+v", res)
	}
	if now := e.status("nosy").PID; now != pid {
		t.Errorf("allow always restarted the server: pid %d, then %d", pid, now)
	}
	// Deny another: refused at once from then on, never asked again.
	other := listenTCP(t, "127.0.0.1")
	got = tryAsync(t, e, "tcpecho", other.addr)
	dest = other.addr
	r = waitConnects(1)
	e.update(func(s *app.State) error { return s.NetworkAnswer(r, false, "") })
	if res := <-got; res.OK {
		t.Fatalf("denied: %+v", res)
	}
	if res := nosyTry(t, e, "nosy", "tcpecho", other.addr); res.OK {
		t.Errorf("denied, tried again: %+v", res)
	}
	if _, open := e.core.Snapshot().State.Request("nosy", other.addr); open || other.count() != 0 {
		t.Errorf("a denied destination was asked again or reached (%d)", other.count())
	}
}

// TestNetworkOpenNamesAndPin: open lets every destination through and
// lists each by the name the server looked up (through Rootkeeper's
// resolver, from a nameserver on loopback); Pin to these makes it only
// those (a restart: it narrowed), after which another destination is
// asked and a name nobody allowed is not even looked up.
func TestNetworkOpenNamesAndPin(t *testing.T) {
	e := netEnv(t, nil, false) // stored before there was a setting: open
	named := listenTCP(t, "127.0.0.3")
	port := netip.MustParseAddrPort(named.addr).Port()
	at := func(host string) string { return net.JoinHostPort(host, strconv.Itoa(int(port))) }
	plain := listenTCP(t, "127.0.0.1")
	if res := nosyTry(t, e, "nosy", "tcpecho", at("api.example.test")); !res.OK || res.Got != "pong" {
		t.Fatalf("open, by name: %+v", res)
	}
	if res := nosyTry(t, e, "nosy", "tcpecho", plain.addr); !res.OK {
		t.Fatalf("open, by address: %+v", res)
	}
	d := e.waitReached(at("api.example.test"))
	if d.Name != "api.example.test" || d.Address != "127.0.0.3" || d.Port != int(port) || !d.Allowed || d.Count != 1 || d.First.IsZero() {
		t.Errorf("the named destination: %+v", d)
	}
	if d := e.waitReached(plain.addr); d.Name != "" || !d.Allowed {
		t.Errorf("the unnamed destination: %+v", d)
	}
	// The record is in the state folder, where status reads it.
	if rec, err := app.ReadNetworkRecord(e.dir, "nosy"); err != nil || len(rec.Destinations) != 2 {
		t.Errorf("the record on disk: %+v, %v", rec, err)
	}
	pid := e.status("nosy").PID
	rec := e.record()
	e.update(func(s *app.State) error { return s.PinNetwork("nosy", rec, "") })
	e.waitRestarted("nosy", pid)
	srv, _ := e.core.Snapshot().State.Server("nosy")
	if n := srv.NetworkOf(); n.Mode != app.NetworkOnly || len(n.Allow) != 2 {
		t.Fatalf("pinned: %+v", n)
	}
	if res := nosyTry(t, e, "nosy", "tcpecho", at("api.example.test")); !res.OK {
		t.Errorf("pinned, by name: %+v", res)
	}
	if res := nosyTry(t, e, "nosy", "lookup", "other.example.test"); res.OK {
		t.Errorf("a name nobody allowed was looked up: %+v", res)
	}
	if res := nosyTry(t, e, "nosy", "tcpecho", listenTCP(t, "127.0.0.1").addr); res.OK {
		t.Errorf("only: another destination went through: %+v", res)
	}
	apptest.Eventually(t, "a request for the name looked up", func() (bool, string) {
		r, ok := e.core.Snapshot().State.Request("nosy", "other.example.test:*")
		return ok && r.Op == app.OpLookup, fmt.Sprintf("%+v", e.core.Snapshot().State.Requests)
	})
}

// TestNetworkSocketSlot: a unix socket its configuration names is a slot:
// the server is held until it is allowed, then connects to it; any other
// socket past its folders is asked about (nobody here: refused, and a
// request recorded).
func TestNetworkSocketSlot(t *testing.T) {
	needLandlock(t)
	run := t.TempDir()
	run, _ = filepath.EvalSymlinks(run)
	sock := filepath.Join(run, "mysqld.sock")
	for _, p := range []string{sock, filepath.Join(run, "other.sock")} {
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	e := newEnv(t)
	root := mkRoot(t, "granted")
	e.update(func(s *app.State) error {
		_, err := s.PutServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: nosyServer(t), Confine: true,
			Env: map[string]string{"MYSQL_SOCKET_PATH": sock}}, app.PutOptions{Given: app.SetConfine})
		return err
	})
	srv, _ := e.core.Snapshot().State.Server("nosy")
	if len(srv.Slots) != 1 || !srv.Slots[0].Socket || srv.Slots[0].Path != sock {
		t.Fatalf("slots: %+v", srv.Slots)
	}
	e.addRoots(root)
	e.grant("nosy", root)
	e.start(e.fastOptions())
	apptest.Eventually(t, "nosy held for its socket", func() (bool, string) {
		st := e.status("nosy")
		return st.State == app.ServerHeld, string(st.State) + " " + st.Error
	})
	e.update(func(s *app.State) error {
		return s.DecideRequest(app.Decision{Server: "nosy", Root: sock, Verdict: app.Allow, Scope: app.Always, By: app.ByCommandLine})
	})
	e.waitConnected("nosy")
	if res := nosyTry(t, e, "nosy", "connect", sock); !res.OK {
		t.Errorf("its allowed socket: %+v", res)
	}
	other := filepath.Join(run, "other.sock")
	if res := nosyTry(t, e, "nosy", "connect", other); res.OK {
		t.Errorf("another socket: %+v", res)
	}
	apptest.Eventually(t, "a request for the other socket", func() (bool, string) {
		r, ok := e.core.Snapshot().State.Request("nosy", "unix:"+other)
		return ok && r.Unasked, fmt.Sprintf("%+v", e.core.Snapshot().State.Requests)
	})
}
