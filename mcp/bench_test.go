package mcp

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// BenchmarkGrantToServer measures, for 1 and 50 stdio servers, the time from
// a grant (core.Update, which writes the state file with fsync) to the
// moment every server holds the new roots/list answer: each runs
// testdata/rootserver, which on list_changed asks for the roots and reports
// the answer over a unix socket. Iterations alternate granting and revoking
// a second root (one stays granted, so no server is restarted for having
// nothing). p50-ms and p99-ms are of the last server's arrival (every
// server holds the change); p50-each-ms and p99-each-ms of each server's own.
// cpu-client-ms and cpu-servers-ms are the CPU time one grant costs this
// process (Rootkeeper's side: the servers' reports are collected by a
// process of its own, collector_test.go) and all the servers together
// (Linux: from /proc): on two cores, half their sum is the least any grant
// can take once the servers have work to do. rw-syscalls and wakes are
// this process's read and write system calls and the times its threads
// were put on a CPU, a grant (Linux), and allocs and alloc-KiB what it
// allocated: load changes them far less than time. sysmon-ms and
// sysmon-wakes are the part of cpu-client-ms and wakes that is the Go
// runtime's monitor thread's (Linux): it polls every 20 µs once woken
// by a system call made through the scheduler, so system calls made that
// way cost more than their own time.
//
// It runs with two servers: "sdk", testdata/rootserver on the go-sdk, and
// "raw", testdata/rawserver, a few dozen lines of JSON-RPC with no SDK, so
// that fifty of them on two cores leave the measurement to the client.
func BenchmarkGrantToServer(b *testing.B) {
	for _, kind := range []string{"sdk", "raw"} {
		for _, n := range []int{1, 50} {
			b.Run(fmt.Sprintf("%s/%d", kind, n), func(b *testing.B) { benchGrant(b, kind, n) })
		}
	}
}

func benchGrant(b *testing.B, kind string, n int) {
	bin := rootServer(b)
	if kind == "raw" {
		bin = rawServer(b)
	}
	e := newEnv(b)
	base, x := mkRoot(b, "base"), mkRoot(b, "x")
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("s%02d", i)
	}
	c := startCollector(b, names)
	for _, name := range names {
		e.addRootServer(bin, &reports{sock: c.sock}, name, "")
	}
	e.addRoots(base, x)
	e.update(func(s *app.State) error {
		for _, name := range names {
			if err := s.Decide(app.Decision{Server: name, Root: base, Verdict: app.Allow}); err != nil {
				return err
			}
		}
		return nil
	})
	opts := e.fastOptions()
	opts.Logger = nil
	c.expect(b, 1)
	e.start(opts)
	c.arrivals(b)

	lat := make([]time.Duration, 0, b.N)
	each := make([]time.Duration, 0, b.N*n) // every server's own latency
	after := make([]time.Duration, 0, b.N)  // from Update's return
	granted := false
	pids := make([]int, 0, n)
	for _, name := range names {
		// Statuses are published in batches: the pid may come later.
		apptest.Eventually(b, name+"'s pid published", func() (bool, string) {
			return e.status(name).PID != 0, string(e.status(name).State)
		})
		pids = append(pids, e.status(name).PID)
	}
	clientBefore, rwBefore, wakesBefore := apptest.SelfCPU(), apptest.SelfRW(), apptest.SelfWakes()
	monitorBefore, monitorWakesBefore := apptest.MonitorCPU()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	allocsBefore, bytesBefore := mem.Mallocs, mem.TotalAlloc
	serversBefore, measured := apptest.ProcessesCPU(pids)
	b.ResetTimer()
	for range b.N {
		granted = !granted
		want := 1
		if granted {
			want = 2
		}
		c.expect(b, want)
		start := time.Now()
		e.update(func(s *app.State) error {
			for _, name := range names {
				if granted {
					if err := s.Decide(app.Decision{Server: name, Root: x, Verdict: app.Allow}); err != nil {
						return err
					}
				} else {
					s.Revoke(name, x)
				}
			}
			return nil
		})
		updated := time.Now()
		var last time.Time
		for _, at := range c.arrivals(b) {
			each = append(each, at.Sub(start))
			if at.After(last) {
				last = at
			}
		}
		lat = append(lat, last.Sub(start))
		after = append(after, last.Sub(updated))
	}
	b.StopTimer()
	perGrant := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(perGrant(apptest.SelfCPU()-clientBefore), "cpu-client-ms")
	monitor, monitorWakes := apptest.MonitorCPU()
	b.ReportMetric(perGrant(monitor-monitorBefore), "sysmon-ms")
	b.ReportMetric(float64(monitorWakes-monitorWakesBefore)/float64(b.N), "sysmon-wakes")
	b.ReportMetric(float64(apptest.SelfRW()-rwBefore)/float64(b.N), "rw-syscalls")
	b.ReportMetric(float64(apptest.SelfWakes()-wakesBefore)/float64(b.N), "wakes")
	runtime.ReadMemStats(&mem)
	b.ReportMetric(float64(mem.Mallocs-allocsBefore)/float64(b.N), "allocs")
	b.ReportMetric(float64(mem.TotalAlloc-bytesBefore)/1024/float64(b.N), "alloc-KiB")
	if serversAfter, ok := apptest.ProcessesCPU(pids); measured && ok {
		b.ReportMetric(perGrant(serversAfter-serversBefore), "cpu-servers-ms")
	}
	pct := func(d []time.Duration, p float64) float64 { return apptest.Millis(apptest.Percentile(d, p)) }
	b.ReportMetric(pct(lat, 0.50), "p50-ms")
	b.ReportMetric(pct(lat, 0.99), "p99-ms")
	// Each server's own wait: with fifty, most hold the change well before
	// the last one does.
	b.ReportMetric(pct(each, 0.50), "p50-each-ms")
	b.ReportMetric(pct(each, 0.99), "p99-each-ms")
	// The same without the state file's write and fsync.
	b.ReportMetric(pct(after, 0.50), "p50-after-save-ms")
	b.ReportMetric(pct(after, 0.99), "p99-after-save-ms")
	b.ReportMetric(0, "ns/op")
}

// rawServer builds testdata/rawserver once.
func rawServer(t testing.TB) string { return apptest.Program(t, "mcp/testdata/rawserver") }

// BenchmarkStartWithSlots is the start of an allowed server, from the
// state's update that adds it to its connection, with a folder in its
// configuration (a slot, allowed) and without one (the same server, its
// variable naming no folder): compare their p50-ms.
func BenchmarkStartWithSlots(b *testing.B) {
	bin := rootServer(b)
	r := listenReports(b)
	e := newEnv(b)
	work := mkRoot(b, "work")
	opts := e.fastOptions()
	opts.Logger = nil
	e.start(opts)
	sig, unsub := e.core.Subscribe()
	defer unsub()
	startOne := func(name, value string) time.Duration {
		srv := app.Server{Name: name, Type: app.TransportStdio, Command: bin,
			Args: []string{"-name", name, "-version", legacyVersion},
			Env:  map[string]string{"RK_REPORT": r.sock, "GOMAXPROCS": "1", "WORK_DIR": value}}
		began := time.Now()
		e.update(func(s *app.State) error {
			res, err := s.PutServer(srv, app.PutOptions{})
			for _, sl := range res.Server.Slots {
				if err := s.DecideRequest(app.Decision{Server: name, Root: sl.Path, Verdict: app.Allow, Scope: app.Always}); err != nil {
					return err
				}
			}
			return err
		})
		for e.status(name).State != app.ServerConnected {
			<-sig
		}
		took := time.Since(began)
		e.update(func(s *app.State) error { return s.RemoveServer(name) })
		return took
	}
	var with, without []time.Duration
	b.ResetTimer()
	for i := range b.N {
		// Interleaved, so that both see the same machine.
		without = append(without, startOne(fmt.Sprintf("plain%d", i), "not-a-folder"))
		with = append(with, startOne(fmt.Sprintf("slot%d", i), work))
	}
	b.StopTimer()
	plain, slots := apptest.Millis(apptest.Median(without)), apptest.Millis(apptest.Median(with))
	b.ReportMetric(plain, "p50-no-slots-ms")
	b.ReportMetric(slots, "p50-slots-ms")
	b.ReportMetric(slots/plain, "ratio")
	b.ReportMetric(0, "ns/op")
}
