package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/cli"
	"rootkeeper/app/words"
	"rootkeeper/mcp"
	"rootkeeper/mcp/confine"
)

// A confined server's network through the real binary: a host's bridge
// with no app, with the app headless, and with the app's window up.

// hostListener counts what reached a TCP (echo: a line in, "pong" out) or
// UDP socket on the host's loopback.
type hostListener struct {
	addr string
	mu   sync.Mutex
	hits int
}

func (l *hostListener) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hits
}

func (l *hostListener) hit() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hits++
}

func hostTCP(t *testing.T, host string) *hostListener {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	l := &hostListener{addr: ln.Addr().String()}
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

func hostUDP(t *testing.T, host string) *hostListener {
	t.Helper()
	pc, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	l := &hostListener{addr: pc.LocalAddr().String()}
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

// loopbackNameserver answers every name under example.test with
// 127.0.0.3, and is where confined servers' lookups go
// (mcp.EnvNameservers, in the environment of every rootkeeper the test
// runs).
func loopbackNameserver(t *testing.T) {
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
	t.Setenv(mcp.EnvNameservers, pc.LocalAddr().String())
}

// networkSetup is a state folder with the confined test server nosy, its
// network as given (`servers add --network`), allowed one folder, and a
// reach wait of two minutes (a connect held for an answer nobody gives
// would hold the test that long).
func networkSetup(t *testing.T, network string) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("Landlock is Linux's")
	}
	if _, err := confine.ABI(); err != nil {
		t.Fatalf("Landlock: %v", err)
	}
	if ok, why := confine.Isolation(); !ok {
		t.Fatalf("no network of its own for a confined server here: %s", why)
	}
	loopbackNameserver(t)
	nosy := apptest.Program(t, "mcp/confine/testdata/nosy")
	state := t.TempDir()
	folder, _ := filepath.EvalSymlinks(t.TempDir())
	args := []string{"servers", "add", "nosy", "--confine"}
	if network != "" {
		args = append(args, "--network", network)
	}
	out := mustRun(t, state, append(args, "--", nosy)...)
	if network != "" && !strings.Contains(out, "nosy: network "+network) {
		t.Errorf("servers add --network %s said:\n%s", network, out)
	}
	mustRun(t, state, "roots", "add", folder, "--enable")
	mustRun(t, state, "grant", "nosy", folder)
	mustRun(t, state, "settings", "reach-wait", "2m")
	return state
}

// nosyNetwork is nosy's network in `status --json`.
func nosyNetwork(t *testing.T, state string) (cli.NetworkView, []app.Request) {
	t.Helper()
	for _, s := range liveStatus(t, state).Servers {
		if s.Name == "nosy" && s.Network != nil {
			return *s.Network, s.Requests
		}
	}
	t.Fatal("nosy has no network in status --json")
	return cli.NetworkView{}, nil
}

// reached is the destination dest in nosy's record, as status --json
// shows it.
func reached(t *testing.T, state, dest string) (app.Reached, bool) {
	t.Helper()
	v, _ := nosyNetwork(t, state)
	for _, d := range v.Destinations {
		if d.Dest == dest {
			return d, true
		}
	}
	return app.Reached{}, false
}

// answer is the answer that comes on ch, failing the test after a minute
// (a bridge that ended answers nothing).
func answer(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case line := <-ch:
		return line
	case <-time.After(time.Minute):
		t.Fatal("no answer from the bridge within a minute")
		return ""
	}
}

// TestNetworkOffThroughTheBridge: a bridged server whose network is off
// reaches nothing — TCP and UDP, 127.0.0.1 and ::1 — with nobody asked
// and nothing recorded but what it tried.
func TestNetworkOffThroughTheBridge(t *testing.T) {
	state := networkSetup(t, "off")
	h := startHostSession(t, state)
	tcp4, tcp6, udp4, udp6 := hostTCP(t, "127.0.0.1"), hostTCP(t, "::1"), hostUDP(t, "127.0.0.1"), hostUDP(t, "::1")
	for _, try := range [][2]string{{"tcpecho", tcp4.addr}, {"tcpecho", tcp6.addr}, {"udp", udp4.addr}, {"udp", udp6.addr}} {
		if line := answer(t, h.try(try[0], try[1])); tryOK(line) || !strings.Contains(line, "permission denied") {
			t.Errorf("%s %s with its network off: %s", try[0], try[1], line)
		}
	}
	if n := tcp4.count() + tcp6.count() + udp4.count() + udp6.count(); n != 0 {
		t.Errorf("%d connections or datagrams reached the host's loopback", n)
	}
	v, reqs := nosyNetwork(t, state)
	if v.Setting.Mode != app.NetworkOff || !v.Bounded || len(reqs) != 0 {
		t.Errorf("status --json: %+v, requests %+v", v, reqs)
	}
	if out := mustRun(t, state, "status"); !strings.Contains(out, "network off: no socket reaches anything outside its sandbox") {
		t.Errorf("status:\n%s", out)
	}
}

// TestNetworkAskWithNobody: a bridged server set to ask, with no app
// running: its connect to a new destination is refused at once (nobody
// does anything, and the request never held a connect), the request and
// the refused destination wait in status; the person allows it on the
// command line, and the next connect goes through, the same server
// process running.
func TestNetworkAskWithNobody(t *testing.T) {
	state := networkSetup(t, "ask")
	h := startHostSession(t, state)
	echo := hostTCP(t, "::1")
	dest := netip.MustParseAddrPort(echo.addr).String()
	if line := answer(t, h.try("tcpecho", dest)); tryOK(line) || !strings.Contains(line, "permission denied") {
		t.Fatalf("asked of nobody: %s", line)
	}
	var req app.Request
	waitFor(t, "the request in status --json", func() bool {
		_, reqs := nosyNetwork(t, state)
		for _, r := range reqs {
			if r.Path == dest {
				req = r
				return true
			}
		}
		return false
	})
	if req.From != app.FromNetwork || !req.Unasked || len(req.Calls) != 0 {
		t.Errorf("the request: %+v", req)
	}
	waitFor(t, "the destination in the record", func() bool {
		d, ok := reached(t, state, dest)
		return ok && !d.Allowed && d.Refused == 1
	})
	out := mustRun(t, state, "status")
	for _, want := range []string{"nosy tried to connect to " + dest + " — allow it?", "Nobody was there to ask when nosy tried this",
		"`rootkeeper servers network nosy allow '" + dest + "'`", dest + " refused, once"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if echo.count() != 0 {
		t.Error("the destination was reached")
	}
	pid := bridgePID(t, state)
	mustRun(t, state, "servers", "network", "nosy", "allow", dest)
	waitFor(t, "the connect once allowed always", func() bool { return tryOK(answer(t, h.try("tcpecho", dest))) })
	if now := bridgePID(t, state); now != pid {
		t.Errorf("allowing a destination restarted the server: %d, then %d", pid, now)
	}
	if _, reqs := nosyNetwork(t, state); len(reqs) != 0 {
		t.Errorf("the request stays once answered: %+v", reqs)
	}
}

// TestNetworkAskAllowOnceWithTheWindow: with the app's window up, a
// connect of a bridged server set to ask waits for the person; status
// shows it with its short id, and allow once by that id lets exactly that
// connect through, from the same server process, allowing nothing more.
func TestNetworkAskAllowOnceWithTheWindow(t *testing.T) {
	state := networkSetup(t, "ask")
	startGUIApp(t, state)
	h := startHostSession(t, state)
	echo := hostTCP(t, "127.0.0.1")
	got := h.try("tcpecho", echo.addr)
	var call app.ReachCall
	waitFor(t, "the connect waiting on its request", func() bool {
		_, reqs := nosyNetwork(t, state)
		for _, r := range reqs {
			if r.Path == echo.addr && len(r.Calls) == 1 && !r.Unasked {
				call = r.Calls[0]
				return call.Short != ""
			}
		}
		return false
	})
	first := bridgePID(t, state)
	out := mustRun(t, state, "status")
	if want := "[" + call.Short + "] connect to " + echo.addr + " (once: `rootkeeper grant nosy --once --call " + call.Short + "`)"; !strings.Contains(out, want) {
		t.Errorf("status does not offer %q:\n%s", want, out)
	}
	mustRun(t, state, "grant", "nosy", "--once", "--call", call.Short)
	if line := answer(t, got); !tryOK(line) || !strings.Contains(line, "pong") {
		t.Fatalf("the connect allowed once: %s", line)
	}
	if now := bridgePID(t, state); first == 0 || now != first {
		t.Errorf("the server's pid went from %d to %d", first, now)
	}
	if echo.count() != 1 {
		t.Errorf("the destination saw %d connections, want the one allowed once", echo.count())
	}
	if v, _ := nosyNetwork(t, state); len(v.Setting.Allow) != 0 {
		t.Errorf("allow once allowed something: %+v", v.Setting)
	}
}

// TestNetworkOpenNamesPinAndOnly: a bridged server left open (the default
// of a server Rootkeeper does not know) reaches what it asks for; status
// lists each destination by the name it looked up (a nameserver on
// loopback); `servers network nosy pin` makes it only those; then another
// destination is refused with nobody to ask, a name nobody allowed is not
// looked up, and `only` with bad destinations is refused naming them,
// nothing saved.
func TestNetworkOpenNamesPinAndOnly(t *testing.T) {
	state := networkSetup(t, "")
	if v, _ := nosyNetwork(t, state); v.Setting.Mode != app.NetworkOpen || !v.Names {
		t.Fatalf("a server Rootkeeper does not know: %+v", v)
	}
	named := hostTCP(t, "127.0.0.3")
	port := strconv.Itoa(int(netip.MustParseAddrPort(named.addr).Port()))
	plain := hostTCP(t, "127.0.0.1")
	h := startHostSession(t, state)
	if line := answer(t, h.try("tcpecho", "api.example.test:"+port)); !strings.Contains(line, "pong") {
		t.Fatalf("open, by name: %s", line)
	}
	if line := answer(t, h.try("tcpecho", plain.addr)); !strings.Contains(line, "pong") {
		t.Fatalf("open, by address: %s", line)
	}
	var d app.Reached
	waitFor(t, "the named destination in status", func() bool {
		var ok bool
		d, ok = reached(t, state, "api.example.test:"+port)
		return ok
	})
	if d.Name != "api.example.test" || d.Address != "127.0.0.3" || !d.Allowed || d.Count != 1 {
		t.Errorf("the named destination: %+v", d)
	}
	if out := mustRun(t, state, "status"); !strings.Contains(out, "api.example.test:"+port+" (127.0.0.3) allowed, once") || !strings.Contains(out, "servers network nosy pin") {
		t.Errorf("status:\n%s", out)
	}
	waitFor(t, "the plain destination in status", func() bool { _, ok := reached(t, state, plain.addr); return ok })
	out := mustRun(t, state, "servers", "network", "nosy", "pin")
	if !strings.Contains(out, "network only ") || !strings.Contains(out, " api.example.test:"+port) || !strings.Contains(out, plain.addr) || !strings.Contains(out, "starts again") {
		t.Errorf("pin said:\n%s", out)
	}
	// The session ends (its network narrowed); the host starts it again.
	h = startHostSession(t, state)
	if line := answer(t, h.try("tcpecho", "api.example.test:"+port)); !strings.Contains(line, "pong") {
		t.Errorf("pinned, by name: %s", line)
	}
	if line := answer(t, h.try("lookup", "other.example.test")); tryOK(line) {
		t.Errorf("a name nobody allowed was looked up: %s", line)
	}
	other := hostTCP(t, "127.0.0.1")
	if line := answer(t, h.try("tcpecho", other.addr)); tryOK(line) || other.count() != 0 {
		t.Errorf("only: another destination: %s", line)
	}

	// Both refusals are requests for the person (written in the
	// background): in the state before it is read.
	waitFor(t, "the requests of what only refused", func() bool {
		_, reqs := nosyNetwork(t, state)
		var paths []string
		for _, r := range reqs {
			paths = append(paths, r.Path)
		}
		return slices.Contains(paths, other.addr) && slices.Contains(paths, "other.example.test:*")
	})
	before, _ := os.ReadFile(filepath.Join(state, app.StateFileName))
	_, errOut, code := rootkeeper(t, state, "servers", "network", "nosy", "only", "good.example:443", "nope", "x:y")
	if code != 2 || !strings.Contains(errOut, `"nope", "x:y"`) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("bad destinations: exit %d, %q", code, errOut)
	}
	for _, bad := range [][]string{{"servers", "network", "nosy", "sometimes"}, {"servers", "add", "x", "--network", "sometimes", "--", "true"}} {
		if _, errOut, code := rootkeeper(t, state, bad...); code != 2 || !strings.Contains(errOut, `"sometimes"`) {
			t.Errorf("%q: exit %d, %q", bad, code, errOut)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(state, app.StateFileName)); string(after) != string(before) {
		t.Error("bad input changed the state")
	}
}

// TestNetworkDefaults: servers added or imported take the default of what
// they run: a memory server (known to need no network) is off; through
// npx, only npx's registry; a search server is open.
func TestNetworkDefaults(t *testing.T) {
	state := t.TempDir()
	mustRun(t, state, "servers", "add", "memory", "--", apptest.NPMServer(t, "mcp-server-memory"))
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"thinking": map[string]any{"command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-sequential-thinking"}},
		"tavily":   map[string]any{"command": "npx", "args": []string{"-y", "tavily-mcp"}, "env": map[string]string{"TAVILY_API_KEY": "x"}},
	}})
	os.WriteFile(cfg, data, 0o600)
	mustRun(t, state, "import", cfg)
	want := map[string]string{"memory": "off", "thinking": "only registry.npmjs.org:443", "tavily": "open"}
	for _, s := range liveStatus(t, state).Servers {
		n := s.Network.Setting
		got := string(n.Mode)
		if n.Mode == app.NetworkOnly {
			got += " " + strings.Join(n.Allow, " ")
		}
		if got != want[s.Name] {
			t.Errorf("%s: network %q, want %q", s.Name, got, want[s.Name])
		}
	}
}

// TestNetworkSocketFailureNamesTheSocket: a server (node, as the npm
// database servers are) that connects to a unix socket past its folders
// and stops when that is refused: the bridge, with no app running, says
// which socket and how to allow it, status shows the same, and allowing it
// on its network lets the next start connect.
func TestNetworkSocketFailureNamesTheSocket(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Landlock is Linux's")
	}
	if _, err := confine.ABI(); err != nil {
		t.Fatalf("Landlock: %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed (run .ci/setup): %v", err)
	}
	run, _ := filepath.EvalSymlinks(t.TempDir())
	sock := filepath.Join(run, "mysqld.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	script := filepath.Join(t.TempDir(), "db.js")
	os.WriteFile(script, []byte(`require("net").connect(process.argv[2]).on("connect", () => { console.error("connected"); process.exit(3) }).on("error", e => { console.error("Error: " + e.message); process.exit(1) })`+"\n"), 0o644)
	state := t.TempDir()
	mustRun(t, state, "servers", "add", "db", "--confine", "--keep-arg", sock, "--", node, script, sock)
	// A host that stays: the bridge ends when its server does.
	bridge := func() string {
		t.Helper()
		br := exec.Command(binary, "--state-dir", state, "bridge", "db")
		br.Env = serverEnv()
		in, _ := br.StdinPipe()
		var out syncBuffer
		br.Stdout, br.Stderr = &out, &out
		if err := br.Start(); err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test-host","version":"1"}}}`+"\n")
		done := make(chan error, 1)
		go func() { done <- br.Wait() }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			br.Process.Kill()
			t.Fatalf("the bridge did not end with its server:\n%s", out.String())
		}
		return out.String()
	}
	out := bridge()
	want := "db stopped while confined: it tried to connect to unix:" + sock
	if !strings.Contains(out, want) || !strings.Contains(out, "rootkeeper servers network db allow "+words.ShellQuote("unix:"+sock)) {
		t.Errorf("the bridge said:\n%s\nwant %q and the command that allows it", out, want)
	}
	status := mustRun(t, state, "status")
	if !strings.Contains(status, want) || !strings.Contains(status, "allow: rootkeeper servers network db allow "+words.ShellQuote("unix:"+sock)) {
		t.Errorf("status:\n%s", status)
	}
	mustRun(t, state, "servers", "network", "db", "allow", "unix:"+sock)
	if out := bridge(); !strings.Contains(out, "connected") {
		t.Errorf("allowed on its network, the socket: %s", out)
	}
}
