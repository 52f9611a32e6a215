package app

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseDestination(t *testing.T) {
	for in, want := range map[string]string{
		"api.tavily.com:443":                     "api.tavily.com:443",
		"API.Tavily.COM.:443":                    "api.tavily.com:443",
		"*.example.com:*":                        "*.example.com:*",
		"203.0.113.7:443":                        "203.0.113.7:443",
		"[2001:db8::1]:443":                      "[2001:db8::1]:443",
		"[::ffff:203.0.113.7]:80":                "203.0.113.7:80", // as a contact names it
		"localhost:5432":                         "localhost:5432",
		"unix:/run/mysqld/../mysqld/mysqld.sock": "unix:/run/mysqld/mysqld.sock",
		"my_host.internal:8080":                  "my_host.internal:8080",
	} {
		got, err := ParseDestination(in)
		if err != nil || got != want {
			t.Errorf("ParseDestination(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "api.tavily.com", ":443", "api.tavily.com:0", "api.tavily.com:65536", "api.tavily.com:+1",
		"api.tavily.com:044", "2001:db8::1:443", "[203.0.113.7]:443", "unix:run/x.sock", "a..b:443", "-a.com:443", "*.:443",
		"http://x.com:443", "a b:443", "[fe80::1%eth0]:443"} {
		if got, err := ParseDestination(bad); err == nil {
			t.Errorf("ParseDestination(%q) = %q, want an error", bad, got)
		} else if !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
			t.Errorf("the error for %q does not name it: %v", bad, err)
		}
	}
	// Every bad entry is named in one line; nothing is kept.
	got, err := ParseDestinations([]string{"ok.example.com:443", "nope", "ok.example.com:443", "x:y"})
	var ie *InputError
	if !errors.As(err, &ie) || got != nil || !strings.Contains(err.Error(), `"nope", "x:y"`) || strings.Contains(err.Error(), "\n") {
		t.Errorf("ParseDestinations with two bad entries = %q, %v", got, err)
	}
	if got, err := ParseDestinations([]string{"a.com:1", "A.com:1", "b.com:*"}); err != nil || !slices.Equal(got, []string{"a.com:1", "b.com:*"}) {
		t.Errorf("ParseDestinations drops repeats: %q, %v", got, err)
	}
}

// stdioWith is a stdio server whose network is n.
func stdioWith(n *NetworkSetting) Server {
	return Server{Name: "s", Type: TransportStdio, Command: "server", Network: n}
}

func TestDecideContact(t *testing.T) {
	tavily := NetContact{Proto: ProtoTCP, Name: "api.tavily.com", Addr: netip.MustParseAddrPort("203.0.113.7:443")}
	cdn := NetContact{Proto: ProtoTCP, Name: "cdn.example.com", Addr: netip.MustParseAddrPort("198.51.100.9:443")}
	bare := NetContact{Proto: ProtoTCP, Addr: netip.MustParseAddrPort("192.0.2.1:5432")}
	six := NetContact{Proto: ProtoTCP, Addr: netip.MustParseAddrPort("[2001:db8::1]:443")}
	mapped := NetContact{Proto: ProtoTCP, Addr: netip.MustParseAddrPort("[::ffff:192.0.2.1]:5432")}
	sock := NetContact{Proto: ProtoUnix, Path: "/run/mysqld/mysqld.sock"}
	only := func(allow ...string) *NetworkSetting { return &NetworkSetting{Mode: NetworkOnly, Allow: allow} }
	for _, tc := range []struct {
		name    string
		n       *NetworkSetting
		c       NetContact
		sockets []string
		want    NetVerdict
	}{
		{"state written before: open", nil, tavily, nil, NetAllow},
		{"open", &NetworkSetting{Mode: NetworkOpen}, six, nil, NetAllow},
		{"open, denied", &NetworkSetting{Mode: NetworkOpen, Deny: []string{"api.tavily.com:443"}}, tavily, nil, NetRefuse},
		{"open: a unix socket is refused and recorded for the person", &NetworkSetting{Mode: NetworkOpen}, sock, nil, NetRefuseAsk},
		{"open: a unix socket allowed", &NetworkSetting{Mode: NetworkOpen, Allow: []string{"unix:/run/mysqld/mysqld.sock"}}, sock, nil, NetAllow},
		{"off refuses everything", &NetworkSetting{Mode: NetworkOff, Allow: []string{"api.tavily.com:443"}}, tavily, nil, NetRefuse},
		{"off refuses even a socket slot", &NetworkSetting{Mode: NetworkOff}, sock, []string{sock.Path}, NetRefuse},
		{"ask", &NetworkSetting{Mode: NetworkAsk}, tavily, nil, NetAsk},
		{"ask, allowed always", &NetworkSetting{Mode: NetworkAsk, Allow: []string{"api.tavily.com:443"}}, tavily, nil, NetAllow},
		{"ask, a socket slot allowed", &NetworkSetting{Mode: NetworkAsk}, sock, []string{sock.Path}, NetAllow},
		{"only: listed", only("api.tavily.com:443"), tavily, nil, NetAllow},
		{"only: another port is asked", only("api.tavily.com:80"), tavily, nil, NetAsk},
		{"only: any port", only("api.tavily.com:*"), tavily, nil, NetAllow},
		{"only: a subdomain", only("*.example.com:443"), cdn, nil, NetAllow},
		{"only: *.NAME is not NAME", only("*.cdn.example.com:443"), cdn, nil, NetAsk},
		{"only: a name is not its address's entry", only("203.0.113.7:443"), tavily, nil, NetAllow},
		{"only: an address", only("192.0.2.1:5432"), bare, nil, NetAllow},
		{"only: an IPv4-mapped address is its IPv4 one", only("192.0.2.1:5432"), mapped, nil, NetAllow},
		{"only: IPv6", only("[2001:db8::1]:443"), six, nil, NetAllow},
		{"only: a name does not match a contact without one", only("api.tavily.com:443"), NetContact{Proto: ProtoTCP, Addr: tavily.Addr}, nil, NetAsk},
		{"only: deny wins", &NetworkSetting{Mode: NetworkOnly, Allow: []string{"*.example.com:*"}, Deny: []string{"cdn.example.com:443"}}, cdn, nil, NetRefuse},
		{"only: a socket", only("unix:/run/mysqld/mysqld.sock"), sock, nil, NetAllow},
		{"only: another socket", only("unix:/run/other.sock"), sock, nil, NetAsk},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DecideContact(stdioWith(tc.n), tc.c, tc.sockets, nil); got != tc.want {
				t.Errorf("DecideContact = %v, want %v", got, tc.want)
			}
		})
	}
	// Without a name (a server sharing the host's network), a NAME entry
	// matches the addresses the host resolves it to.
	resolve := func(name string) []netip.Addr {
		if name == "api.tavily.com" {
			return []netip.Addr{netip.MustParseAddr("203.0.113.7")}
		}
		return nil
	}
	unnamed := NetContact{Proto: ProtoTCP, Addr: tavily.Addr}
	if got := DecideContact(stdioWith(only("api.tavily.com:443")), unnamed, nil, resolve); got != NetAllow {
		t.Errorf("a NAME entry for an unnamed contact at one of its addresses: %v", got)
	}
	if got := DecideContact(stdioWith(only("evil.example:443")), unnamed, nil, resolve); got != NetAsk {
		t.Errorf("a NAME entry for an unnamed contact elsewhere: %v", got)
	}
}

func TestLookupAllowed(t *testing.T) {
	for _, tc := range []struct {
		n    *NetworkSetting
		name string
		want bool
	}{
		{nil, "anything.example", true},
		{&NetworkSetting{Mode: NetworkAsk}, "anything.example", true},
		{&NetworkSetting{Mode: NetworkOff}, "anything.example", false},
		{&NetworkSetting{Mode: NetworkOnly, Allow: []string{"api.tavily.com:443"}}, "api.tavily.com", true},
		{&NetworkSetting{Mode: NetworkOnly, Allow: []string{"api.tavily.com:443"}}, "API.tavily.com.", true},
		// A lookup carries whatever its name spells: a name nobody
		// allowed never leaves.
		{&NetworkSetting{Mode: NetworkOnly, Allow: []string{"api.tavily.com:443"}}, "c2VjcmV0.evil.example", false},
		{&NetworkSetting{Mode: NetworkOnly, Allow: []string{"*.example.com:443"}}, "a.b.example.com", true},
		{&NetworkSetting{Mode: NetworkOnly, Allow: []string{"203.0.113.7:443"}}, "api.tavily.com", false},
		{&NetworkSetting{Mode: NetworkOpen, Deny: []string{"evil.example:*"}}, "evil.example", false},
		{&NetworkSetting{Mode: NetworkOpen, Deny: []string{"evil.example:443"}}, "evil.example", true},
	} {
		if got := LookupAllowed(stdioWith(tc.n), tc.name); got != tc.want {
			t.Errorf("LookupAllowed(%+v, %q) = %v, want %v", tc.n, tc.name, got, tc.want)
		}
	}
}

func TestDefaultNetwork(t *testing.T) {
	npm := filepath.Join(t.TempDir(), "node_modules")
	for _, tc := range []struct {
		name string
		srv  Server
		want *NetworkSetting
	}{
		{"a known local server, installed", Server{Command: "mcp-server-memory"}, &NetworkSetting{Mode: NetworkOff}},
		{"a known local server, by its package's path", Server{Command: "node", Args: []string{npm + "/@modelcontextprotocol/server-filesystem/dist/index.js", "/x"}}, &NetworkSetting{Mode: NetworkOff}},
		{"through npx: only npx's registry", Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-sequential-thinking@2026.8.31"}},
			&NetworkSetting{Mode: NetworkOnly, Allow: []string{"registry.npmjs.org:443"}}},
		{"through npx with a registry of its own", Server{Command: "/usr/bin/npx", Args: []string{"-y", "mcp-server-sqlite-npx", "/x.db"},
			Env: map[string]string{"npm_config_registry": "https://npm.example.com/repo/"}}, &NetworkSetting{Mode: NetworkOnly, Allow: []string{"npm.example.com:443"}}},
		{"through uvx", Server{Command: "uvx", Args: []string{"mcp-obsidian"}}, &NetworkSetting{Mode: NetworkOnly, Allow: []string{"pypi.org:443", "files.pythonhosted.org:443"}}},
		{"an unknown server: open, watched", Server{Command: "npx", Args: []string{"-y", "tavily-mcp"}}, &NetworkSetting{Mode: NetworkOpen}},
		{"a git server: open (its remotes are any host)", Server{Command: "git-mcp-server"}, &NetworkSetting{Mode: NetworkOpen}},
		{"a remote server: none", Server{Type: TransportHTTP, URL: "https://x.example/mcp"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.srv
			srv.Name = "s"
			if srv.Type == "" {
				srv.Type = TransportStdio
			}
			if d := cmp.Diff(tc.want, DefaultNetwork(srv)); d != "" {
				t.Errorf("DefaultNetwork (-want +got):\n%s", d)
			}
		})
	}
}

// TestPutServerNetwork: a new server gets its default, a replaced one
// keeps its setting unless the definition gives one, a server stored
// before there was a setting stays open, and a remote one has none.
func TestPutServerNetwork(t *testing.T) {
	var s State
	put := func(srv Server, o PutOptions) Server {
		t.Helper()
		res, err := s.PutServer(srv, o)
		if err != nil {
			t.Fatal(err)
		}
		return res.Server
	}
	mem := Server{Name: "mem", Type: TransportStdio, Command: "mcp-server-memory"}
	if got := put(mem, PutOptions{}); got.NetworkOf().Mode != NetworkOff {
		t.Errorf("a new memory server: %+v", got.Network)
	}
	if err := s.SetServerNetwork("mem", NetworkSetting{Mode: NetworkAsk, Allow: []string{"a.example:443"}}, ""); err != nil {
		t.Fatal(err)
	}
	// An import or a protect gives no network: the person's stays.
	if got := put(mem, PutOptions{Replace: true}); got.NetworkOf().Mode != NetworkAsk || !slices.Equal(got.Network.Allow, []string{"a.example:443"}) {
		t.Errorf("replaced without a setting: %+v", got.Network)
	}
	// Stored by an earlier version: no field, open.
	s.Servers = append(s.Servers, Server{Name: "old", Type: TransportStdio, Command: "mcp-server-memory"})
	if got := put(Server{Name: "old", Type: TransportStdio, Command: "mcp-server-memory", Args: []string{"x"}}, PutOptions{Replace: true}); got.Network != nil || got.NetworkOf().Mode != NetworkOpen {
		t.Errorf("a server stored before there was a setting: %+v", got.Network)
	}
	web := put(Server{Name: "web", Type: TransportHTTP, URL: "https://x.example/mcp", Network: &NetworkSetting{Mode: NetworkOff}}, PutOptions{Given: SetNetwork})
	if web.Network != nil {
		t.Errorf("a remote server has a network setting: %+v", web.Network)
	}
	if err := s.SetServerNetwork("web", NetworkSetting{Mode: NetworkOff}, ""); err == nil {
		t.Error("a remote server's network was set")
	}
	// Bad input: named, nothing changed.
	before := s.Clone()
	err := s.SetServerNetwork("mem", NetworkSetting{Mode: NetworkOnly, Allow: []string{"good.example:443", "bad"}}, "")
	if err == nil || !strings.Contains(err.Error(), `"bad"`) || !cmp.Equal(before, s.Clone(), cmp.AllowUnexported(Snapshot{})) {
		t.Errorf("a bad destination: %v", err)
	}
	if err := s.SetServerNetwork("mem", NetworkSetting{Mode: "sometimes"}, ""); err == nil || !strings.Contains(err.Error(), `"sometimes"`) {
		t.Errorf("a bad mode: %v", err)
	}
	if err := s.SetServerNetwork("mem", NetworkSetting{Mode: NetworkOnly}, ""); err == nil {
		t.Error("only with nothing in it was stored")
	}
}

func TestNetworkNeedsRestart(t *testing.T) {
	srv := func(mode NetworkMode, allow, deny []string) Server {
		return stdioWith(&NetworkSetting{Mode: mode, Allow: allow, Deny: deny})
	}
	for _, tc := range []struct {
		name     string
		was, now Server
		want     bool
	}{
		{"allowed one more", srv(NetworkAsk, nil, nil), srv(NetworkAsk, []string{"a:443"}, nil), false},
		{"ask to open", srv(NetworkAsk, nil, nil), srv(NetworkOpen, nil, nil), false},
		{"ask to only its answers", srv(NetworkAsk, []string{"a:443"}, nil), srv(NetworkOnly, []string{"a:443"}, nil), false},
		{"denied what it was never let reach", srv(NetworkAsk, nil, nil), srv(NetworkAsk, nil, []string{"a:443"}), false},
		{"off to open: a network of its own is made at start", srv(NetworkOff, nil, nil), srv(NetworkOpen, nil, nil), true},
		{"open to off", srv(NetworkOpen, nil, nil), srv(NetworkOff, nil, nil), true},
		{"open to ask", srv(NetworkOpen, nil, nil), srv(NetworkAsk, nil, nil), true},
		{"open, then denied", srv(NetworkOpen, nil, nil), srv(NetworkOpen, nil, []string{"a:443"}), true},
		{"an allowed one taken away", srv(NetworkOnly, []string{"a:443", "b:443"}, nil), srv(NetworkOnly, []string{"a:443"}, nil), true},
		{"an allowed one denied", srv(NetworkAsk, []string{"a:443"}, nil), srv(NetworkAsk, nil, []string{"a:443"}), true},
		{"open, a socket allowed taken away", srv(NetworkOpen, []string{"unix:/x.sock"}, nil), srv(NetworkOpen, nil, nil), true},
		{"before there was a setting, then pinned", stdioWith(nil), srv(NetworkOnly, []string{"a:443"}, nil), true},
	} {
		if got := NetworkNeedsRestart(tc.was, tc.now); got != tc.want {
			t.Errorf("%s: NetworkNeedsRestart = %v, want %v", tc.name, got, tc.want)
		}
		if got := SameRunButNetwork(tc.was, tc.now); got == tc.want {
			t.Errorf("%s: SameRunButNetwork = %v", tc.name, got)
		}
	}
	other := stdioWith(nil)
	other.Args = []string{"x"}
	if SameRunButNetwork(stdioWith(nil), other) {
		t.Error("another command line is the same run")
	}
}

// TestNetworkRecordBounds: two processes recording one server add up; the
// record keeps the MaxReached most recent destinations; Used is what was
// let through.
func TestNetworkRecordBounds(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	a := &NetworkRecorder{StateDir: dir, Server: "s", Every: time.Hour}
	b := &NetworkRecorder{StateDir: dir, Server: "s", Every: time.Hour}
	tavily := NetContact{Proto: ProtoTCP, Name: "api.tavily.com", Addr: netip.MustParseAddrPort("203.0.113.7:443")}
	a.Note(tavily, true, t0)
	a.Note(tavily, true, t0.Add(time.Second))
	b.Note(tavily, false, t0.Add(2*time.Second))
	b.Note(NetContact{Proto: ProtoLookup, Name: "evil.example"}, false, t0)
	var wg sync.WaitGroup
	for _, r := range []*NetworkRecorder{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); r.Flush() }()
	}
	wg.Wait()
	rec, err := ReadNetworkRecord(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	want := []Reached{
		{Dest: "api.tavily.com:443", Proto: ProtoTCP, Name: "api.tavily.com", Address: "203.0.113.7", Port: 443, First: t0, Last: t0.Add(2 * time.Second), Count: 3, Refused: 1},
		{Dest: "evil.example:*", Proto: ProtoLookup, Name: "evil.example", First: t0, Last: t0, Count: 1, Refused: 1},
	}
	if d := cmp.Diff(want, rec.Destinations); d != "" {
		t.Errorf("record (-want +got):\n%s", d)
	}
	if got := rec.Used(); !slices.Equal(got, []string{"api.tavily.com:443"}) {
		t.Errorf("Used = %q", got)
	}
	for i := range MaxReached + 40 {
		a.Note(NetContact{Proto: ProtoTCP, Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), 443)}, true, t0.Add(time.Duration(i+10)*time.Second))
	}
	a.Note(tavily, true, t0.Add(time.Hour))
	a.Close()
	rec, _ = ReadNetworkRecord(dir, "s")
	if len(rec.Destinations) != MaxReached || rec.Destinations[0].Dest != "api.tavily.com:443" || rec.Destinations[0].Count != 4 {
		t.Fatalf("a record past its bound: %d destinations, first %+v", len(rec.Destinations), rec.Destinations[0])
	}
	if slices.ContainsFunc(rec.Destinations, func(d Reached) bool { return d.Dest == "evil.example:*" }) {
		t.Error("the destination reached longest ago was kept past the bound")
	}
	if err := RemoveNetworkRecord(dir, "s"); err != nil {
		t.Fatal(err)
	}
	if rec, err := ReadNetworkRecord(dir, "s"); err != nil || len(rec.Destinations) != 0 {
		t.Errorf("a removed record: %+v, %v", rec, err)
	}
}

// TestNetworkRequests: a destination asked with someone there waits and
// gathers the connects that come meanwhile; with nobody it is recorded,
// Unasked; allow once lets the connects shown through; allow always and
// deny change the setting and drop the request; a server's many network
// requests never push out a folder request of its.
func TestNetworkRequests(t *testing.T) {
	var s State
	if _, err := s.PutServer(Server{Name: "s", Type: TransportStdio, Command: "server", Network: &NetworkSetting{Mode: NetworkAsk}}, PutOptions{Given: SetNetwork}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	call := func(id string) ReachCall { return ReachCall{ID: id, Op: OpConnect, Path: "api.tavily.com:443"} }
	until, err := s.AskNetwork("s", "api.tavily.com:443", "203.0.113.7:443", call("c1"), now, true)
	if err != nil || !until.Equal(now.Add(DefaultReachWait)) {
		t.Fatalf("asked: %v, %v", until, err)
	}
	if u2, _ := s.AskNetwork("s", "api.tavily.com:443", "203.0.113.7:443", call("c2"), now.Add(time.Second), true); !u2.Equal(until) {
		t.Errorf("a second connect does not join the first: %v", u2)
	}
	r, _ := s.Request("s", "api.tavily.com:443")
	if r.From != FromNetwork || len(r.Calls) != 2 || RequestText(r) != "s tried to connect to api.tavily.com:443 (203.0.113.7:443) — allow it?" {
		t.Errorf("the request: %+v, %q", r, RequestText(r))
	}
	q := ReachQuestionOf(r, now, nil)
	if q.Default != ReachDeny || !q.Once || q.Calls[0].Text("") != "connect to api.tavily.com:443" {
		t.Errorf("the question: %+v", q)
	}
	ans, err := s.GrantOnce("s", "api.tavily.com:443", []string{"c1"}, ByDialog, now.Add(2*time.Second))
	if err != nil || len(ans.Let) != 1 {
		t.Fatalf("allow once: %+v, %v", ans, err)
	}
	if _, ok := s.OnceFor("s", "c1"); !ok {
		t.Error("the connect allowed once is not in the state")
	}
	if _, ok := s.OnceFor("s", "c2"); ok {
		t.Error("a connect not shown was let through once")
	}
	if _, open := s.Request("s", "api.tavily.com:443"); open {
		t.Error("the request stays after allow once")
	}
	// Nobody to ask: recorded, refused now.
	if u, _ := s.AskNetwork("s", "unix:/run/x.sock", "", ReachCall{ID: "c3", Op: OpConnect, Path: "unix:/run/x.sock"}, now, false); !u.IsZero() {
		t.Error("a connect with nobody to ask waits")
	}
	r, _ = s.Request("s", "unix:/run/x.sock")
	if !r.Unasked || len(r.Calls) != 0 {
		t.Errorf("unasked request: %+v", r)
	}
	if err := s.DecideRequest(Decision{Server: "s", Root: "unix:/run/x.sock", Verdict: Allow}); err == nil {
		t.Error("a network request was decided as a folder")
	}
	if err := s.NetworkAnswer(r, true, ""); err != nil {
		t.Fatal(err)
	}
	srv, _ := s.Server("s")
	if n := srv.NetworkOf(); !slices.Equal(n.Allow, []string{"unix:/run/x.sock"}) || n.Mode != NetworkAsk {
		t.Errorf("allow always: %+v", n)
	}
	if _, open := s.Request("s", "unix:/run/x.sock"); open {
		t.Error("the request stays after allow always")
	}
	// Deny: remembered, and an only left with nothing in it asks.
	if err := s.SetServerNetwork("s", NetworkSetting{Mode: NetworkOnly, Allow: []string{"a.example:443"}}, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.NetworkDeny("s", "a.example:443", ""); err != nil {
		t.Fatal(err)
	}
	srv, _ = s.Server("s")
	if n := srv.NetworkOf(); n.Mode != NetworkAsk || len(n.Allow) != 0 || !slices.Equal(n.Deny, []string{"a.example:443"}) {
		t.Errorf("deny: %+v", n)
	}
	// A folder request, then more network requests than a server keeps.
	dir := t.TempDir()
	if _, err := s.AddRequest("s", dir, "claude-code", now); err != nil {
		t.Fatal(err)
	}
	for i := range MaxNetworkRequestsPerServer + 10 {
		dest := fmt.Sprintf("198.51.100.%d:443", i)
		s.AskNetwork("s", dest, "", ReachCall{ID: dest, Op: OpConnect, Path: dest}, now.Add(time.Duration(i)*time.Second), false)
	}
	n := 0
	for _, r := range s.RequestsFor("s") {
		if r.From == FromNetwork {
			n++
		}
	}
	if _, open := s.Request("s", dir); !open || n != MaxNetworkRequestsPerServer {
		t.Errorf("%d network requests kept; the folder request open: %v", n, open)
	}
}

// TestPinNetwork: Pin to these allows what the server was let through to
// so far, and nothing it was refused.
func TestPinNetwork(t *testing.T) {
	var s State
	if _, err := s.PutServer(Server{Name: "s", Type: TransportStdio, Command: "server"}, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.PinNetwork("s", NetworkRecord{}, ""); err == nil {
		t.Error("pinned to nothing")
	}
	rec := NetworkRecord{Destinations: []Reached{
		{Dest: "api.tavily.com:443", Proto: ProtoTCP, Count: 3, Allowed: true},
		{Dest: "evil.example:443", Proto: ProtoTCP, Count: 1, Refused: 1},
		{Dest: "unix:/run/x.sock", Proto: ProtoUnix, Count: 2, Refused: 1},
		{Dest: "other.example:*", Proto: ProtoLookup, Count: 1, Refused: 1},
	}}
	if err := s.PinNetwork("s", rec, ""); err != nil {
		t.Fatal(err)
	}
	srv, _ := s.Server("s")
	if n := srv.NetworkOf(); n.Mode != NetworkOnly || !slices.Equal(n.Allow, []string{"api.tavily.com:443", "unix:/run/x.sock"}) {
		t.Errorf("pinned: %+v", n)
	}
}

// TestSocketSlots: a unix socket a configuration names is a slot, there
// or not yet there.
func TestSocketSlots(t *testing.T) {
	run := t.TempDir()
	run, _ = filepath.EvalSymlinks(run)
	os.MkdirAll(filepath.Join(run, "mysqld"), 0o755)
	os.MkdirAll(filepath.Join(run, "postgresql"), 0o755)
	live := filepath.Join(run, "live.s")
	l, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	srv := Server{Name: "db", Type: TransportStdio, Command: "server", Args: []string{live, filepath.Join(run, "nothing.here")},
		Env: map[string]string{
			"MYSQL_SOCKET_PATH": filepath.Join(run, "mysqld", "mysqld.sock"),
			"DATABASE_URL":      "postgresql://me@/db?host=" + filepath.Join(run, "postgresql") + "&port=5433",
			"OTHER":             filepath.Join(run, "mysqld", "x.txt"),
		}}
	got := FindSlots(srv, "")
	want := []Slot{
		{Path: live, Given: live, Arg: 0, File: true, Socket: true},
		{Path: filepath.Join(run, "postgresql", ".s.PGSQL.5433"), Given: filepath.Join(run, "postgresql"), Arg: -1, Env: "DATABASE_URL", File: true, Socket: true},
		{Path: filepath.Join(run, "mysqld", "mysqld.sock"), Given: filepath.Join(run, "mysqld", "mysqld.sock"), Arg: -1, Env: "MYSQL_SOCKET_PATH", File: true, Socket: true},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("socket slots (-want +got):\n%s", d)
	}
	// Allowed, each is a socket the server may connect to.
	s := State{Servers: []Server{srv}}
	s.Servers[0].Slots = got
	snap := &Snapshot{State: s}
	if got := SocketSlotPaths(snap, "db"); len(got) != 0 {
		t.Errorf("undecided socket slots allowed: %q", got)
	}
	s.Decisions = append(s.Decisions, Decision{Server: "db", Root: want[2].Path, Verdict: Allow, Scope: Always})
	snap = &Snapshot{State: s}
	if got := SocketSlotPaths(snap, "db"); !slices.Equal(got, []string{want[2].Path}) {
		t.Errorf("allowed socket slots: %q", got)
	}
}

// TestConfineFailureNamesTheSocket: a server that stops after a connect to
// a socket past its folders was refused says which socket, and offers to
// allow it on its network.
func TestConfineFailureNamesTheSocket(t *testing.T) {
	at := time.Now()
	for _, tc := range []struct {
		stderr  string
		refused []RefusedAttempt
		want    string
	}{
		{"Error: connect EACCES /run/mysqld/mysqld.sock\n    at PipeConnectWrap.afterConnect", []RefusedAttempt{{Path: "unix:/run/mysqld/mysqld.sock", Op: OpConnect}}, "unix:/run/mysqld/mysqld.sock"},
		{`psql: error: connection to server on socket "/run/postgresql/.s.PGSQL.5432" failed: Permission denied`, nil, "unix:/run/postgresql/.s.PGSQL.5432"},
		{"PermissionError: [Errno 13] Permission denied", []RefusedAttempt{{Path: "unix:/run/mysqld/mysqld.sock", Op: OpConnect}}, "unix:/run/mysqld/mysqld.sock"},
	} {
		f, ok := DiagnoseConfineFailure("db", tc.refused, tc.stderr, at, "/home/me")
		if !ok || f.Destination != tc.want {
			t.Errorf("%q: %+v, %v; want the destination %s", tc.stderr, f, ok, tc.want)
			continue
		}
		if text := f.Text("/home/me"); text != "db stopped while confined: it tried to connect to "+tc.want+" — allow it on its network, or run it unconfined" {
			t.Errorf("text: %q", text)
		}
	}
	// A socket refused to a server that stopped saying nothing of it is
	// no failure of its confinement (a browser tries D-Bus, then fails
	// for a reason of its own).
	if f, ok := DiagnoseConfineFailure("web", []RefusedAttempt{{Path: "unix:/run/dbus/system_bus_socket", Op: OpConnect}}, "Error: no display", at, "/home/me"); ok {
		t.Errorf("a failure of its own taken for its confinement's: %+v", f)
	}
}
