package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/mcp/confine"
)

// fsStarter starts server-filesystem (its launcher, two roots) confined,
// observed or not, and returns its session and the time from building its
// command to Connect's return; observed ones report to a watch that lets
// everything go on.
func fsStarter(b *testing.B, roots []string) func(observe bool) (*sdk.ClientSession, time.Duration) {
	return fsStarterSeen(b, roots, nil)
}

// fsStarterSeen is fsStarter; the observers started are put in *seen.
func fsStarterSeen(b *testing.B, roots []string, seen *[]*confine.Observer) func(observe bool) (*sdk.ClientSession, time.Duration) {
	bin := apptest.NPMServer(b, "mcp-server-filesystem")
	dir := b.TempDir()
	srv := app.Server{Name: "fs", Type: app.TransportStdio, Command: bin}
	snap := &app.Snapshot{}
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, &sdk.ClientOptions{})
	for _, r := range roots {
		client.AddRoots(&sdk.Root{URI: app.URIFromPath(r)})
	}
	return func(observe bool) (*sdk.ClientSession, time.Duration) {
		began := time.Now()
		cmd, _ := StdioCommand(srv, snap)
		var obs *confine.Observer
		var err error
		if observe {
			_, obs, err = ObserveCommand(cmd, srv, roots, dir)
		} else {
			_, err = ConfineCommand(cmd, srv, roots, dir)
		}
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		t := &stdioTransport{cmd: cmd, terminate: time.Second, version: func() string { return "" }, proc: newProcess()}
		if obs != nil && seen != nil {
			*seen = append(*seen, obs)
		}
		if obs != nil {
			t.obs = &observed{obs: obs, watch: &ReachWatch{Server: "fs"}}
			t.obs.watch.init()
		}
		cs, err := client.Connect(ctx, t, nil)
		if err != nil {
			b.Fatalf("observed=%v: %v", observe, err)
		}
		return cs, time.Since(began)
	}
}

// BenchmarkObservedStart: start of a confined server-filesystem observed
// against confined without observation (the anchor), interleaved; reports
// the medians and their ratio (goal ≤ 1.15).
func BenchmarkObservedStart(b *testing.B) {
	needLandlock(b)
	start := fsStarter(b, []string{mkRoot(b, "alpha"), mkRoot(b, "beta")})
	for _, o := range []bool{false, true} {
		cs, _ := start(o)
		cs.Close()
	}
	var plain, observed []time.Duration
	b.ResetTimer()
	for i := range b.N {
		for _, o := range []bool{i%2 == 0, i%2 != 0} {
			cs, took := start(o)
			cs.Close()
			if o {
				observed = append(observed, took)
			} else {
				plain = append(plain, took)
			}
		}
	}
	b.StopTimer()
	p, o := apptest.Median(plain), apptest.Median(observed)
	b.ReportMetric(ms(p), "confined-ms")
	b.ReportMetric(ms(o), "observed-ms")
	b.ReportMetric(float64(o)/float64(p), "ratio")
}

// BenchmarkObservedRead1000: one read_multiple_files call of 1,000 files
// inside the roots, on a confined server-filesystem observed and on one
// without observation (the anchor), interleaved; reports the medians and
// their ratio (goal ≤ 1.2).
func BenchmarkObservedRead1000(b *testing.B) {
	needLandlock(b)
	root := mkRoot(b, "many")
	paths := make([]string, 1000)
	for i := range paths {
		paths[i] = filepath.Join(root, fmt.Sprintf("f%04d.txt", i))
		os.WriteFile(paths[i], []byte("x"), 0o600)
	}
	var seen []*confine.Observer
	start := fsStarterSeen(b, []string{root}, &seen)
	plainCS, _ := start(false)
	defer plainCS.Close()
	obsCS, _ := start(true)
	defer obsCS.Close()
	call := func(cs *sdk.ClientSession) time.Duration {
		began := time.Now()
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "read_multiple_files", Arguments: map[string]any{"paths": paths}})
		if err != nil || res.IsError {
			b.Fatalf("read_multiple_files: %v %+v", err, res)
		}
		return time.Since(began)
	}
	call(plainCS)
	call(obsCS)
	var plain, observed []time.Duration
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			plain = append(plain, call(plainCS))
			observed = append(observed, call(obsCS))
		} else {
			observed = append(observed, call(obsCS))
			plain = append(plain, call(plainCS))
		}
	}
	b.StopTimer()
	p, o := apptest.Median(plain), apptest.Median(observed)
	b.ReportMetric(ms(p), "confined-ms")
	b.ReportMetric(ms(o), "observed-ms")
	b.ReportMetric(float64(o)/float64(p), "ratio")
	b.ReportMetric(float64(seen[0].Seen())/float64(b.N+1), "notifications/call")
}

// BenchmarkReachToRequest: from a confined nosy's tool call that reads a
// file in a folder it was not given until the request is in the core
// (what status and the window show), each attempt in a new folder, each
// request then denied. Reports p50 and p99, and the anchor: the same
// call inside its root.
func BenchmarkReachToRequest(b *testing.B) {
	needLandlock(b)
	bin := nosyServer(b)
	e := newEnv(b)
	root := mkRoot(b, "granted")
	os.WriteFile(filepath.Join(root, "in.txt"), []byte("in"), 0o600)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: bin, Confine: true})
	})
	e.addRoots(root)
	e.grant("nosy", root)
	opts := e.fastOptions()
	opts.CanAsk = func() bool { return true } // the window asks
	opts.Logger = nil
	m := e.start(opts)
	m.reachLimit.Burst, m.reachLimit.Per = 1<<30, time.Second // measure the path, not the limiter
	e.waitConnected("nosy")
	base := mkRoot(b, "outside")
	changes, stop := e.core.Subscribe()
	defer stop()
	var lat, inside []time.Duration
	b.ResetTimer()
	for i := range b.N {
		dir := filepath.Join(base, fmt.Sprintf("d%05d", i))
		os.MkdirAll(dir, 0o755)
		f := filepath.Join(dir, "x.txt")
		os.WriteFile(f, []byte("x"), 0o600)
		began := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			callText(b, m, "nosy", "try", map[string]any{"op": "read", "path": f})
		}()
		for {
			if _, ok := e.core.Snapshot().State.Request("nosy", dir); ok {
				break
			}
			<-changes
		}
		lat = append(lat, time.Since(began))
		e.update(func(s *app.State) error {
			return s.DecideRequest(app.Decision{Server: "nosy", Root: dir, Verdict: app.Deny, By: app.ByCommandLine})
		})
		<-done
		began = time.Now()
		callText(b, m, "nosy", "try", map[string]any{"op": "read", "path": filepath.Join(root, "in.txt")})
		inside = append(inside, time.Since(began))
	}
	b.StopTimer()
	b.ReportMetric(ms(apptest.Percentile(lat, 0.5)), "p50-ms")
	b.ReportMetric(ms(apptest.Percentile(lat, 0.99)), "p99-ms")
	b.ReportMetric(ms(apptest.Median(inside)), "inside-call-ms")
}

// BenchmarkReachRefusedUnasked: headless (nobody to ask), a confined nosy's
// tool call that reads a file in a folder it was not given, each time a new
// folder (each raises a request, written in the background), against the
// anchor: the same call reading a file inside its root. Reports p50 and
// p99 of both and the p99 difference, what a refusal costs a server's call
// (goal: p99 ≤ 50 ms).
func BenchmarkReachRefusedUnasked(b *testing.B) { benchReadsOutside(b, true, "refused") }

// BenchmarkReachProbe is BenchmarkReachRefusedUnasked for files that are
// not there (a runtime probing for its config): nothing to ask about, and
// the call goes on before the app records it (confine.Reach).
func BenchmarkReachProbe(b *testing.B) { benchReadsOutside(b, false, "probe") }

// benchReadsOutside times a confined nosy's tool calls that read a file in
// a new folder outside its root each time, there or not (exist), against
// reads inside its root, interleaved; the metrics are named after what.
func benchReadsOutside(b *testing.B, exist bool, what string) {
	needLandlock(b)
	bin := nosyServer(b)
	e := newEnv(b)
	root := mkRoot(b, "granted")
	inside := filepath.Join(root, "in.txt")
	os.WriteFile(inside, []byte("in"), 0o600)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: bin, Confine: true})
	})
	e.addRoots(root)
	e.grant("nosy", root)
	opts := e.fastOptions()
	opts.Logger = nil
	m := e.start(opts)
	m.reachLimit.Burst, m.reachLimit.Per = 1<<30, time.Second // every folder raises its request
	e.waitConnected("nosy")
	base := mkRoot(b, "outside")
	files := make([]string, b.N)
	for i := range files {
		dir := filepath.Join(base, fmt.Sprintf("d%05d", i))
		os.MkdirAll(dir, 0o755)
		files[i] = filepath.Join(dir, "x.txt")
		if exist {
			os.WriteFile(files[i], []byte("x"), 0o600)
		}
	}
	failure := map[bool]string{true: "permission denied", false: "no such file"}[exist]
	call := func(path string) time.Duration {
		began := time.Now()
		text, err := callText(b, m, "nosy", "try", map[string]any{"op": "read", "path": path})
		if err != nil {
			b.Fatal(err)
		}
		if path != inside && !strings.Contains(text, failure) {
			b.Fatalf("read %s: %s", path, text)
		}
		return time.Since(began)
	}
	var outside, anchor []time.Duration
	b.ResetTimer()
	for i := range b.N {
		outside = append(outside, call(files[i]))
		anchor = append(anchor, call(inside))
	}
	b.StopTimer()
	p50, p99 := apptest.Percentile(outside, 0.5), apptest.Percentile(outside, 0.99)
	a50, a99 := apptest.Percentile(anchor, 0.5), apptest.Percentile(anchor, 0.99)
	b.ReportMetric(ms(p50), what+"-p50-ms")
	b.ReportMetric(ms(p99), what+"-p99-ms")
	b.ReportMetric(ms(a50), "inside-p50-ms")
	b.ReportMetric(ms(a99), "inside-p99-ms")
	b.ReportMetric(ms(p99-a99), "p99-extra-ms")
}

// BenchmarkProbingStartHeadless: the start (process to initialize
// answered) of a server that lists five folders outside its own at start,
// confined and observed with nobody to ask (headless), against the same
// server started unconfined (the anchor), interleaved; reports the medians
// and their ratio (goal ≤ 1.2).
func BenchmarkProbingStartHeadless(b *testing.B) {
	needLandlock(b)
	bin := nosyServer(b)
	e := newEnv(b)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: bin, Confine: true})
	})
	root := mkRoot(b, "granted")
	var probed []string
	for i := range 5 {
		d := mkRoot(b, fmt.Sprintf("probed%d", i))
		os.WriteFile(filepath.Join(d, "x"), nil, 0o600)
		probed = append(probed, d)
	}
	prober := app.Server{Name: "nosy", Type: app.TransportStdio, Command: bin, Args: []string{"-probe", strings.Join(probed, ",")}}
	watch := NewReachWatch(e.core, nil, nil, "nosy", e.dir)
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	start := func(confined bool) time.Duration { return startOnce(b, client, prober, watch, root, e.dir, confined) }
	// The same server confined without probing: what confinement itself
	// costs at start, apart from the probes.
	quiet := prober
	quiet.Args = nil
	startQuiet := func() time.Duration { return startOnce(b, client, quiet, watch, root, e.dir, true) }
	start(false)
	start(true)
	var plain, confined, noProbe []time.Duration
	b.ResetTimer()
	for i := range b.N {
		for _, c := range []bool{i%2 == 0, i%2 != 0} {
			if c {
				confined = append(confined, start(true))
			} else {
				plain = append(plain, start(false))
			}
		}
		noProbe = append(noProbe, startQuiet())
	}
	b.StopTimer()
	p, c, q := apptest.Median(plain), apptest.Median(confined), apptest.Median(noProbe)
	b.ReportMetric(ms(p), "unconfined-ms")
	b.ReportMetric(ms(c), "confined-ms")
	b.ReportMetric(ms(q), "confined-noprobe-ms")
	b.ReportMetric(float64(c)/float64(p), "ratio")
}

// startOnce starts srv (confined to root and observed by watch, or not) and
// connects client; it returns the time from the command to initialize's
// answer.
func startOnce(b *testing.B, client *sdk.Client, srv app.Server, watch *ReachWatch, root, stateDir string, confined bool) time.Duration {

	began := time.Now()
	cmd, _ := StdioCommand(srv, &app.Snapshot{})
	t := &stdioTransport{cmd: cmd, terminate: time.Second, version: func() string { return "" }, proc: &process{}}
	if confined {
		_, obs, err := ObserveCommand(cmd, srv, []string{root}, stateDir)
		if err != nil {
			b.Fatal(err)
		}
		t.obs = &observed{obs: obs, watch: watch}
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		b.Fatalf("confined=%v: %v", confined, err)
	}
	took := time.Since(began)
	cs.Close()
	return took
}
