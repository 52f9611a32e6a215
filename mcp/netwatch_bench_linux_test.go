package mcp

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/audit"
	"rootkeeper/mcp/confine"
)

// benchNetEnv runs nosy managed, confined and observed with network n,
// nobody to ask (headless), every new destination raising its request
// (no rate limit), its lookups going to testNameserver.
func benchNetEnv(b *testing.B, n *app.NetworkSetting, withoutReach bool) *testEnv {
	needLandlock(b)
	testNameserver(b)
	bin := nosyServer(b)
	e := newEnv(b)
	root := mkRoot(b, "granted")
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: bin, Confine: true, Network: n})
	})
	e.addRoots(root)
	e.grant("nosy", root)
	opts := e.fastOptions()
	opts.Logger = nil
	opts.WithoutReach = withoutReach
	m := e.start(opts)
	m.netLimit.Burst, m.netLimit.Per = 1<<30, time.Second
	e.waitConnected("nosy")
	return e
}

// tryTimed calls nosy's try and returns how long the call took and its
// answer.
func tryTimed(b *testing.B, e *testEnv, op, path string) (time.Duration, string) {
	began := time.Now()
	text, err := callText(b, e.m, "nosy", "try", map[string]any{"op": op, "path": path})
	if err != nil {
		b.Fatal(err)
	}
	return time.Since(began), text
}

// BenchmarkFirstContactNobody: headless (nobody to ask), a confined
// nosy set to ask makes a tool call that looks up a name it never looked
// up and connects to it — each time a new name, each raising its request
// (written in the background) — against the anchor, interleaved: the same
// call to a name it is allowed (looked up, connected through the relay,
// a line echoed). Reports p50 and p99 of both (goal: refused in ≤ 50 ms
// p99).
func BenchmarkFirstContactNobody(b *testing.B) {
	echo := listenTCP(b, "127.0.0.3")
	port := strconv.Itoa(int(netip.MustParseAddrPort(echo.addr).Port()))
	e := benchNetEnv(b, &app.NetworkSetting{Mode: app.NetworkAsk, Allow: []string{"allowed.example.test:" + port}}, false)
	var refused, anchor []time.Duration
	b.ResetTimer()
	for i := range b.N {
		d, text := tryTimed(b, e, "tcpecho", net.JoinHostPort(fmt.Sprintf("new%d.example.test", i), port))
		if !strings.Contains(text, "permission denied") {
			b.Fatalf("a new name with nobody to ask: %s", text)
		}
		refused = append(refused, d)
		d, text = tryTimed(b, e, "tcpecho", net.JoinHostPort("allowed.example.test", port))
		if !strings.Contains(text, "pong") {
			b.Fatalf("the allowed name: %s", text)
		}
		anchor = append(anchor, d)
	}
	b.StopTimer()
	b.ReportMetric(ms(apptest.Percentile(refused, 0.5)), "refused-p50-ms")
	b.ReportMetric(ms(apptest.Percentile(refused, 0.99)), "refused-p99-ms")
	b.ReportMetric(ms(apptest.Percentile(anchor, 0.5)), "allowed-p50-ms")
	b.ReportMetric(ms(apptest.Percentile(anchor, 0.99)), "allowed-p99-ms")
}

// BenchmarkWatchedConnectNetWatch: 200 connects (a line sent and echoed
// each) by a confined nosy to a listener on the host's loopback in one
// tool call: with its network open, each connect decided by NetWatch,
// recorded and audited, and relayed from outside its sandbox; against
// the anchor, the same server confined without observation (its connects
// plain, on the host's network). Reports each's time per connect and the
// difference (goal ≤ 100 µs).
func BenchmarkWatchedConnectNetWatch(b *testing.B) {
	echo := listenTCP(b, "127.0.0.1")
	op := echo.addr + ",200"
	watched := benchNetEnv(b, &app.NetworkSetting{Mode: app.NetworkOpen}, false)
	plain := benchNetEnv(b, &app.NetworkSetting{Mode: app.NetworkOpen}, true)
	var w, p []time.Duration
	b.ResetTimer()
	for range b.N {
		for _, run := range []struct {
			e   *testEnv
			out *[]time.Duration
		}{{watched, &w}, {plain, &p}} {
			d, text := tryTimed(b, run.e, "connects", op)
			if !strings.Contains(text, `"ok":true`) {
				b.Fatalf("200 connects: %s", text)
			}
			*run.out = append(*run.out, d/200)
		}
	}
	b.StopTimer()
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	b.ReportMetric(us(apptest.Percentile(w, 0.5)), "watched-µs/connect")
	b.ReportMetric(us(apptest.Percentile(p, 0.5)), "unwatched-µs/connect")
	b.ReportMetric(us(apptest.Percentile(w, 0.5)-apptest.Percentile(p, 0.5)), "extra-µs/connect")
}

// BenchmarkNetWatchContact: what NetWatch itself adds to each connect a
// confined server makes (the mechanism — the observer's dial and the
// relay — is BenchmarkWatchedConnect in mcp/confine): an allowed contact
// of a server whose network is open (its decision from the snapshot, the
// record noted, the audit line appended), against the anchor, a contact
// denied by its setting, which notes and audits the same.
func BenchmarkNetWatchContact(b *testing.B) {
	e := newEnv(b)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "s", Type: app.TransportStdio, Command: "server", Confine: true,
			Network: &app.NetworkSetting{Mode: app.NetworkOpen, Deny: []string{"denied.example:443"}}})
	})
	al := audit.NewLog(e.dir)
	defer al.Close()
	w := NewNetWatch(e.core, al, nil, "s", e.dir)
	defer w.Close()
	addr := netip.MustParseAddrPort("203.0.113.7:443")
	for _, tc := range []struct {
		name string
		c    confine.Contact
		want bool
	}{
		{"allowed", confine.Contact{Proto: "tcp", Addr: addr, Name: "api.example"}, true},
		{"denied", confine.Contact{Proto: "tcp", Addr: addr, Name: "denied.example"}, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if w.Contact(context.Background(), tc.c) != tc.want {
					b.Fatalf("%s: not %v", tc.name, tc.want)
				}
			}
		})
	}
}
