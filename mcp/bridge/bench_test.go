package bridge

import (
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// benchHost is a host talking to the input server, either directly (a
// process of its own) or through a bridge, for the same measurements.
func benchHost(b *testing.B, bridged bool) (*host, *fixture, func()) {
	b.Helper()
	return benchHostOf(b, bridged, apptest.Program(b, "mcp/bridge/testdata/inputserver"))
}

// benchHostOf is benchHost with the server's command given.
func benchHostOf(b *testing.B, bridged bool, server string) (*host, *fixture, func()) {
	b.Helper()
	hostIn, bridgeIn := io.Pipe()
	bridgeOut, hostOut := io.Pipe()
	h := &host{t: b, in: bridgeIn, waits: map[string]chan jsonRaw{}}
	var f *fixture
	var stop func()
	if bridged {
		core, dir := apptest.NewCore(b)
		a := b.TempDir()
		core.Update(func(s *app.State) error {
			s.AddServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: server})
			s.AddRoot(app.Root{Path: a, Enabled: true})
			return s.Decide(app.Decision{Server: "fs", Root: a, Verdict: app.Allow})
		})
		setHealthy(core, a)
		f = &fixture{core: core, dir: dir, a: a}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		sessions := make(chan Session, 64)
		go func() {
			Run(ctx, Options{Core: core, Server: "fs", HostIn: hostIn, HostOut: hostOut, Stderr: io.Discard,
				OnSession: func(s Session) {
					select {
					case sessions <- s:
					default:
					}
				}})
			hostOut.Close()
			close(done)
		}()
		f.sessions = sessions
		stop = func() { bridgeIn.Close(); cancel(); <-done }
	} else {
		cmd := exec.Command(server)
		cmd.Stdin, cmd.Stdout = hostIn, hostOut
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		stop = func() { bridgeIn.Close(); cmd.Wait() }
	}
	go h.read(bridgeOut)
	return h, f, stop
}

type jsonRaw = json.RawMessage

func initialize(h *host) {
	h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}})
	h.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
}

// BenchmarkRoundTrip is a small tools/call through the bridge and straight
// to the same server: compare their p50-µs and p99-µs.
func BenchmarkRoundTrip(b *testing.B) {
	for _, bridged := range []bool{false, true} {
		name := map[bool]string{false: "direct", true: "bridged"}[bridged]
		b.Run(name, func(b *testing.B) {
			h, _, stop := benchHost(b, bridged)
			defer stop()
			initialize(h)
			var d []time.Duration
			b.ResetTimer()
			for range b.N {
				began := time.Now()
				h.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
				d = append(d, time.Since(began))
			}
			b.ReportMetric(float64(apptest.Percentile(d, 0.5).Microseconds()), "p50-µs")
			b.ReportMetric(float64(apptest.Percentile(d, 0.99).Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkEverythingEcho is the real server-everything's echo tool called
// through the bridge and straight, as a host would: compare their p50-µs
// and p99-µs (the bridge's cost is the difference).
func BenchmarkEverythingEcho(b *testing.B) {
	server := apptest.NPMServer(b, "mcp-server-everything")
	for _, bridged := range []bool{false, true} {
		name := map[bool]string{false: "direct", true: "bridged"}[bridged]
		b.Run(name, func(b *testing.B) {
			h, _, stop := benchHostOf(b, bridged, server)
			defer stop()
			initialize(h)
			d := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				began := time.Now()
				h.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "hi"}})
				d = append(d, time.Since(began))
			}
			b.ReportMetric(float64(apptest.Percentile(d, 0.5).Microseconds()), "p50-µs")
			b.ReportMetric(float64(apptest.Percentile(d, 0.99).Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkRead1MB reads a 1 MB resource through the bridge and directly:
// compare their MB/s.
func BenchmarkRead1MB(b *testing.B) {
	for _, bridged := range []bool{false, true} {
		name := map[bool]string{false: "direct", true: "bridged"}[bridged]
		b.Run(name, func(b *testing.B) {
			h, _, stop := benchHost(b, bridged)
			defer stop()
			initialize(h)
			b.SetBytes(1 << 20)
			b.ResetTimer()
			for range b.N {
				h.call("resources/read", map[string]any{"uri": "mem://1048576"})
			}
		})
	}
}

// BenchmarkInitialize is the host's initialize to its response, with the
// server started anew each time (its start is in both).
func BenchmarkInitialize(b *testing.B) {
	for _, bridged := range []bool{false, true} {
		name := map[bool]string{false: "direct", true: "bridged"}[bridged]
		b.Run(name, func(b *testing.B) {
			var d []time.Duration
			for range b.N {
				h, _, stop := benchHost(b, bridged)
				began := time.Now()
				h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}})
				d = append(d, time.Since(began))
				stop()
			}
			b.ReportMetric(apptest.Millis(apptest.Percentile(d, 0.5)), "p50-ms")
			b.ReportMetric(apptest.Millis(apptest.Percentile(d, 0.99)), "p99-ms")
		})
	}
}

// BenchmarkGrantToBridgedServer is a grant in the core to the moment the
// bridged server has been sent the new list (list_changed, then its
// roots/list answered).
func BenchmarkGrantToBridgedServer(b *testing.B) {
	h, f, stop := benchHost(b, true)
	defer stop()
	initialize(h)
	other := b.TempDir()
	f.core.Update(func(s *app.State) error { return s.AddRoot(app.Root{Path: other, Enabled: true}) })
	setHealthy(f.core, other)
	uo := app.URIFromPath(other)
	waitFor := func(want bool) {
		for s := range f.sessions {
			if slices.Contains(s.LastSent, uo) == want {
				return
			}
		}
	}
	var d []time.Duration
	b.ResetTimer()
	for i := range b.N {
		grant := i%2 == 0
		began := time.Now()
		f.core.Update(func(s *app.State) error {
			if grant {
				return s.Decide(app.Decision{Server: "fs", Root: other, Verdict: app.Allow})
			}
			s.Revoke("fs", other)
			return nil
		})
		waitFor(grant)
		d = append(d, time.Since(began))
	}
	b.ReportMetric(apptest.Millis(apptest.Percentile(d, 0.5)), "p50-ms")
	b.ReportMetric(apptest.Millis(apptest.Percentile(d, 0.99)), "p99-ms")
}

// BenchmarkGrantFromAnotherProcess is the real path of a grant made in the
// app or on the command line: another Store writes the state file, the
// bridge's core sees it through its file watcher (core.Run), and the
// bridged server is sent the new list.
func BenchmarkGrantFromAnotherProcess(b *testing.B) {
	h, f, stop := benchHost(b, true)
	defer stop()
	apptest.RunCore(b, f.core)
	initialize(h)
	other := b.TempDir()
	f.core.Update(func(s *app.State) error { return s.AddRoot(app.Root{Path: other, Enabled: true}) })
	setHealthy(f.core, other)
	writer, err := app.OpenStore(f.dir)
	if err != nil {
		b.Fatal(err)
	}
	uo := app.URIFromPath(other)
	waitFor := func(want bool) {
		for s := range f.sessions {
			if slices.Contains(s.LastSent, uo) == want {
				return
			}
		}
	}
	var d, after []time.Duration
	b.ResetTimer()
	for i := range b.N {
		// Grants are a person's clicks, not a burst: the watcher folds
		// changes within 20 ms of one it reported.
		b.StopTimer()
		time.Sleep(25 * time.Millisecond)
		b.StartTimer()
		grant := i%2 == 0
		began := time.Now()
		if _, err := writer.Update(func(s *app.State) error {
			if grant {
				return s.Decide(app.Decision{Server: "fs", Root: other, Verdict: app.Allow})
			}
			s.Revoke("fs", other)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		written := time.Now()
		waitFor(grant)
		d = append(d, time.Since(began))
		after = append(after, time.Since(written))
	}
	b.ReportMetric(apptest.Millis(apptest.Percentile(d, 0.5)), "p50-ms")
	b.ReportMetric(apptest.Millis(apptest.Percentile(d, 0.99)), "p99-ms")
	b.ReportMetric(apptest.Millis(apptest.Percentile(after, 0.5)), "p50-after-write-ms")
	b.ReportMetric(apptest.Millis(apptest.Percentile(after, 0.99)), "p99-after-write-ms")
}

// BenchmarkGrantHeldSession is the person's grant (the state's update)
// to the answer of the host's initialize, for a server held by a folder of
// its configuration while the app runs: the bridge starts the server then
// and the same session goes on. The server's start is in it.
func BenchmarkGrantHeldSession(b *testing.B) {
	server := apptest.Program(b, "mcp/bridge/testdata/inputserver")
	lat := make([]time.Duration, 0, b.N)
	b.StopTimer()
	for range b.N {
		core, _ := apptest.NewCore(b)
		work := b.TempDir()
		core.Update(func(s *app.State) error {
			_, err := s.PutServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: server, Env: map[string]string{"WORK_DIR": work}}, app.PutOptions{})
			return err
		})
		hostIn, bridgeIn := io.Pipe()
		bridgeOut, hostOut := io.Pipe()
		h := &host{t: b, in: bridgeIn, waits: map[string]chan jsonRaw{}}
		held := make(chan struct{}, 1)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			Run(ctx, Options{Core: core, Server: "fs", HostIn: hostIn, HostOut: hostOut, Stderr: io.Discard,
				AppRunning: func() bool { return true },
				OnSession: func(s Session) {
					if s.Held != "" {
						select {
						case held <- struct{}{}:
						default:
						}
					}
				}})
			hostOut.Close()
			close(done)
		}()
		go h.read(bridgeOut)
		answered := make(chan time.Time, 1)
		go func() {
			h.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}})
			answered <- time.Now()
		}()
		<-held
		began := time.Now()
		core.Update(func(s *app.State) error {
			return s.DecideRequest(app.Decision{Server: "fs", Root: work, Verdict: app.Allow, Scope: app.Always})
		})
		lat = append(lat, (<-answered).Sub(began))
		bridgeIn.Close()
		cancel()
		<-done
	}
	b.ReportMetric(apptest.Millis(apptest.Percentile(lat, 0.5)), "p50-ms")
	b.ReportMetric(apptest.Millis(apptest.Percentile(lat, 0.99)), "p99-ms")
	b.ReportMetric(0, "ns/op")
}
