package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// BenchmarkConfinedStart measures start-to-initialized of the real
// server-filesystem (its node_modules/.bin launcher, two roots), confined
// and unconfined, interleaved in each iteration so that both see the same
// machine: from building the command to Connect's return (initialize
// answered, initialized sent). It reports the medians and their ratio
// (goal: ratio ≤ 1.1).
func BenchmarkConfinedStart(b *testing.B) {
	needLandlock(b)
	start := coldStarter(b)
	start(false) // warm the page cache for both
	start(true)
	var free, confined []time.Duration
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			free = append(free, start(false))
			confined = append(confined, start(true))
		} else {
			confined = append(confined, start(true))
			free = append(free, start(false))
		}
	}
	b.StopTimer()
	f, c := apptest.Median(free), apptest.Median(confined)
	b.ReportMetric(ms(f), "unconfined-ms")
	b.ReportMetric(ms(c), "confined-ms")
	b.ReportMetric(float64(c)/float64(f), "ratio")
}

// coldStarter returns a function that starts server-filesystem (its
// node_modules/.bin launcher, two roots), confined or not, and returns the
// time from building its command to Connect's return (initialize
// answered, initialized sent); the server is then stopped.
func coldStarter(b *testing.B) func(confined bool) time.Duration {
	bin := apptest.NPMServer(b, "mcp-server-filesystem")
	dir := b.TempDir()
	roots := []string{mkRoot(b, "alpha"), mkRoot(b, "beta")}
	srv := app.Server{Name: "fs", Type: app.TransportStdio, Command: bin}
	snap := &app.Snapshot{}
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, &sdk.ClientOptions{})
	for _, r := range roots {
		client.AddRoots(&sdk.Root{URI: app.URIFromPath(r)})
	}
	return func(confined bool) time.Duration {
		began := time.Now()
		cmd, _ := StdioCommand(srv, snap)
		if confined {
			if _, err := ConfineCommand(cmd, srv, roots, dir); err != nil {
				b.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
		if err != nil {
			b.Fatalf("confined=%v: %v", confined, err)
		}
		took := time.Since(began)
		cs.Close()
		return took
	}
}

// BenchmarkConfinedGrant measures a grant reaching server-filesystem: the
// time from the grant (core.Update) until list_allowed_directories shows
// the new root. "open" is unconfined and learns it through list_changed
// (the anchor); "fs" is confined and is restarted under a new ruleset.
// Iterations alternate granting and revoking the root for one server and
// then the other, so that they never compete for the two cores. It reports
// the medians, the confined one in ms (goal ≤ 300) and as a ratio to the
// anchor; and, as "restart/start", to a cold start of the unconfined
// server measured in the same iterations: a restart cannot beat the
// server's own start-up, which for server-filesystem (node loading its
// modules) is most of it.
func BenchmarkConfinedGrant(b *testing.B) {
	needLandlock(b)
	bin := apptest.NPMServer(b, "mcp-server-filesystem")
	e := newEnv(b)
	base, x := mkRoot(b, "base"), mkRoot(b, "x")
	e.update(func(s *app.State) error {
		if err := s.AddServer(app.Server{Name: "open", Type: app.TransportStdio, Command: bin}); err != nil {
			return err
		}
		return s.AddServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: bin, Confine: true})
	})
	e.addRoots(base, x)
	e.grant("open", base)
	e.grant("fs", base)
	opts := e.fastOptions()
	opts.Logger = nil
	e.start(opts)
	cold := coldStarter(b)
	waitAllowed(b, e, "open", base)
	waitAllowed(b, e, "fs", base)

	// change grants or revokes x for server and waits for it to show.
	change := func(server string, grant bool) time.Duration {
		want := []string{base}
		began := time.Now()
		if grant {
			want = sorted([]string{base, x})
			e.grant(server, x)
		} else {
			e.revoke(server, x)
		}
		var took time.Duration
		timing.Eventually(b, fmt.Sprintf("%s allowed %v", server, want), func() (bool, string) {
			got, err := allowedDirs(b, e.m, server)
			took = time.Since(began)
			return err == nil && slices.Equal(got, want), fmt.Sprint(got, err)
		})
		return took
	}
	var open, fs, starts []time.Duration
	b.ResetTimer()
	for range b.N {
		open = append(open, change("open", true))
		fs = append(fs, change("fs", true))
		change("open", false)
		change("fs", false)
		starts = append(starts, cold(false))
	}
	b.StopTimer()
	o, c, st := apptest.Median(open), apptest.Median(fs), apptest.Median(starts)
	b.ReportMetric(ms(o), "unconfined-ms")
	b.ReportMetric(ms(c), "confined-ms")
	b.ReportMetric(float64(c)/float64(o), "ratio")
	b.ReportMetric(ms(st), "start-ms")
	b.ReportMetric(float64(c)/float64(st), "restart/start")
}

// timing is how the benchmarks here wait for what they time: looked at
// every 2 ms at most, the measure's resolution.
var timing = apptest.Poll{Every: 2 * time.Millisecond}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkConfinedGrantGo measures the same restart for a server that
// starts fast (testdata nosy, a Go binary): the time from a grant until
// the restarted, confined server lists the new root. It shows what the
// restart itself costs once the server's own start-up is small.
func BenchmarkConfinedGrantGo(b *testing.B) {
	needLandlock(b)
	e := newEnv(b)
	base, x := mkRoot(b, "base"), mkRoot(b, "x")
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: nosyServer(b), Confine: true})
	})
	e.addRoots(base, x)
	e.grant("nosy", base)
	opts := e.fastOptions()
	opts.Logger = nil
	e.start(opts)
	e.waitConnected("nosy")
	// lists asks the server to list x; answered is false while it restarts.
	lists := func() (ok, answered bool) {
		text, err := callText(b, e.m, "nosy", "try", map[string]any{"op": "list", "path": x})
		return err == nil && strings.Contains(text, `"ok":true`), err == nil
	}
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		began := time.Now()
		e.grant("nosy", x)
		var took time.Duration
		timing.Eventually(b, "the confined server lists the granted root", func() (bool, string) {
			ok, _ := lists()
			took = time.Since(began)
			return ok, ""
		})
		lat = append(lat, took)
		e.revoke("nosy", x)
		timing.Eventually(b, "the confined server no longer lists the revoked root", func() (bool, string) {
			ok, answered := lists()
			return !ok && answered, fmt.Sprintf("listed %v, answered %v", ok, answered)
		})
	}
	b.StopTimer()
	b.ReportMetric(ms(apptest.Median(lat)), "grant-to-serving-ms")
}

// BenchmarkGrantToConfinedServer: from a grant (core.Update) to the moment
// a running confined server reads a file in the folder granted — its
// observer hands the folder (no restart) — polled by its own tool calls
// (each a round trip of about a millisecond, the measure's resolution).
// Every iteration grants a new folder; p50-ms and p99-ms are reported, and
// the server's pid must not change.
func BenchmarkGrantToConfinedServer(b *testing.B) {
	needLandlock(b)
	bin := nosyServer(b)
	e := newEnv(b)
	home := mkRoot(b, "home")
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: bin, Confine: true})
	})
	e.addRoots(home)
	e.grant("nosy", home)
	e.start(e.fastOptions())
	pid := e.waitConnected("nosy").PID
	folders := make([]string, b.N)
	for i := range folders {
		folders[i] = mkRoot(b, fmt.Sprintf("granted-%d", i))
		os.WriteFile(filepath.Join(folders[i], "f.txt"), []byte("x"), 0o600)
		e.addRoots(folders[i])
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		e.grant("nosy", folders[i])
		var took time.Duration
		// Asked again at once: each try is a round trip of about a
		// millisecond, the measure's resolution.
		apptest.Poll{Every: time.Nanosecond}.Eventually(b, "the folder granted reaches the server", func() (bool, string) {
			r := nosyTry(b, e, "nosy", "read", filepath.Join(folders[i], "f.txt"))
			took = time.Since(start)
			return r.OK, r.Err
		})
		lat = append(lat, took)
	}
	b.StopTimer()
	if now := e.status("nosy").PID; now != pid {
		b.Errorf("a grant restarted the server: pid %d, then %d", pid, now)
	}
	b.ReportMetric(apptest.Millis(apptest.Percentile(lat, 0.5)), "p50-ms")
	b.ReportMetric(apptest.Millis(apptest.Percentile(lat, 0.99)), "p99-ms")
}
