package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/budget"
)

// Hostile servers run against the real binary, headless, each beside an
// honest server (the real server-filesystem) that must keep following grants.

func hostileServer(t testing.TB) string { return apptest.Program(t, "mcp/testdata/hostile") }

// hostileModes are the ways the hostile server misbehaves, with its flags.
func hostileModes(pidfile string) map[string][]string {
	return map[string][]string{
		"giant":          {"-mode", "giant"},
		"sampling-flood": {"-mode", "sampling-flood", "-n", "2000"},
		"roots-flood":    {"-mode", "roots-flood"},
		"deaf-flood":     {"-mode", "deaf-flood"},
		"notify-flood":   {"-mode", "notify-flood"},
		"stderr-flood":   {"-mode", "stderr-flood", "-mb", "300"},
		"no-handshake":   {"-mode", "no-handshake"},
		"crash":          {"-mode", "crash"},
		"escape":         {"-mode", "escape", "-pidfile", pidfile},
		"bad-json":       {"-mode", "bad-json"},
	}
}

// rssMB is the resident memory of process pid in MiB.
func rssMB(t testing.TB, pid int) float64 { return procMB(t, pid, "VmRSS") }

// peakMB is the peak resident memory of process pid in MiB, over its life.
func peakMB(t testing.TB, pid int) float64 { return procMB(t, pid, "VmHWM") }

// procMB reads field (in kB) of /proc/PID/status, in MiB.
func procMB(t testing.TB, pid int, field string) float64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kb) / 1024
		}
	}
	t.Fatalf("no %s", field)
	return 0
}

// dirSize is the total size of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if !pidExists(pid) {
		return false
	}
	// A zombie waiting to be reaped is not running.
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] != 'Z'
	}
	return true
}

// expectHonest waits until the honest server was last sent exactly want.
// (How soon is BenchmarkGrantBesideHostileServers's to say.)
func expectHonest(t *testing.T, state string, want ...string) {
	t.Helper()
	slices.Sort(want)
	apptest.Eventually(t, fmt.Sprintf("the honest server to be sent %q", want), func() (bool, string) {
		sent, _ := lastSent(liveStatus(t, state), "honest")
		return slices.Equal(sent, want) || len(want) == 0 && len(sent) == 0, fmt.Sprint(sent)
	})
}

// statusWatch asks the app for its status every 200 ms until stopped: one
// that does not come (the app hung, within apptest.Patience) or is not
// JSON is a failure; the slowest answer is logged.
type statusWatch struct {
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	slowest time.Duration
	asked   int
	failed  []string
}

func watchStatus(state string) *statusWatch {
	w := &statusWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), apptest.Patience)
			began := time.Now()
			out, err := exec.CommandContext(ctx, binary, "--state-dir", state, "status", "--json").Output()
			took := time.Since(began)
			cancel()
			w.mu.Lock()
			w.asked++
			w.slowest = max(w.slowest, took)
			if err != nil || !json.Valid(out) {
				w.failed = append(w.failed, fmt.Sprintf("after %v: %v", took.Round(time.Millisecond), err))
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// end stops the watch and fails t if any status did not come in time.
func (w *statusWatch) end(t *testing.T) {
	t.Helper()
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	t.Logf("status asked %d times beside the hostile set; slowest answer %v", w.asked, w.slowest.Round(time.Millisecond))
	if len(w.failed) > 0 {
		t.Errorf("%d status requests failed or hung: %q", len(w.failed), w.failed)
	}
}

func TestHostileServersDoNotHurtTheHonestOne(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process groups, /proc and setsid are exercised on Linux")
	}
	hostile := hostileServer(t)
	honest := apptest.NPMServer(t, "mcp-server-filesystem")
	state, tree := t.TempDir(), t.TempDir()
	a, b := filepath.Join(tree, "a"), filepath.Join(tree, "b")
	os.Mkdir(a, 0o755)
	os.Mkdir(b, 0o755)
	// In a folder every hostile server is granted: confined (the default),
	// the escaping one can still write it.
	pidfile := filepath.Join(a, "escaped.pid")
	mustRun(t, state, "servers", "add", "honest", "--", honest)
	for name, args := range hostileModes(pidfile) {
		// Confined, as every stdio server is by default: the bounds hold
		// with each one's observer running too.
		mustRun(t, state, append([]string{"servers", "add", "hostile-" + name, "--", hostile}, args...)...)
	}
	mustRun(t, state, "roots", "add", a, "--enable")
	mustRun(t, state, "roots", "add", b, "--enable")
	mustRun(t, state, "grant", "honest", a)
	for name := range hostileModes(pidfile) {
		mustRun(t, state, "grant", "hostile-"+name, a)
	}

	h := startHeadless(t, state)
	// Every status from here on comes, the floods running.
	status := watchStatus(state)
	ua, ub := app.URIFromPath(a), app.URIFromPath(b)
	expectHonest(t, state, ua)
	// The server that asks and never reads is stopped as hostile (after
	// 10 s of unread answers), and says so; meanwhile the floods run.
	waitFor(t, "the deaf flooder stopped as hostile", func() bool {
		for _, s := range liveStatus(t, state).Servers {
			if s.Name == "hostile-deaf-flood" && s.Live != nil {
				return s.Live.State == app.ServerStopped && strings.Contains(s.Live.Error, "hostile")
			}
		}
		return false
	})

	mustRun(t, state, "grant", "honest", b)
	expectHonest(t, state, ua, ub)
	mustRun(t, state, "revoke", "honest", a)
	expectHonest(t, state, ub)
	status.end(t)

	rss, peak := rssMB(t, h.cmd.Process.Pid), peakMB(t, h.cmd.Process.Pid)
	size := dirSize(state)
	t.Logf("headless RSS %.0f MiB (peak %.0f MiB), state folder %.1f MiB", rss, peak, float64(size)/(1<<20))
	if peak > 200 {
		t.Errorf("headless peaked at %.0f MiB beside the hostile servers; the bound is 200 MiB", peak)
	}
	// 10 servers' logs of at most 4 MiB each, the audit log and the state.
	if size > 64<<20 {
		t.Errorf("the state folder grew to %d MiB", size>>20)
	}
	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatalf("the escaping server never started its child: %v", err)
	}
	escaped, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	t.Cleanup(func() { killPID(escaped) })
	if !alive(escaped) {
		t.Fatal("the escaped child is not running; the test proves nothing")
	}
	var serverPIDs []int
	for _, s := range liveStatus(t, state).Servers {
		if s.Live != nil && s.Live.PID > 0 {
			serverPIDs = append(serverPIDs, s.Live.PID)
		}
	}
	if err := h.stop(); err != nil {
		t.Fatalf("headless did not stop cleanly: %v", err)
	}
	if alive(escaped) {
		t.Errorf("the child that escaped its server's process group (pid %d) outlived the app", escaped)
	}
	for _, pid := range serverPIDs {
		if alive(pid) {
			t.Errorf("server process %d outlived the app", pid)
		}
	}
}

// Killed with SIGKILL, the app cannot stop its servers; the kernel's
// parent-death signal does, within seconds.
func TestServersDieWithAKilledApp(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("PR_SET_PDEATHSIG is Linux's")
	}
	hostile := hostileServer(t)
	honest := apptest.NPMServer(t, "mcp-server-filesystem")
	state := t.TempDir()
	mustRun(t, state, "servers", "add", "honest", "--", honest)
	// It ignores the end of its stdin: only the death signal ends it.
	mustRun(t, state, "servers", "add", "plain", "--", hostile, "-mode", "honest", "-linger")
	h := startHeadless(t, state)
	var pids []int
	waitFor(t, "both servers connected", func() bool {
		pids = nil
		for _, s := range liveStatus(t, state).Servers {
			if s.Live != nil && s.Live.State == app.ServerConnected {
				pids = append(pids, s.Live.PID)
			}
		}
		return len(pids) == 2
	})
	h.cmd.Process.Kill()
	for _, pid := range pids {
		t.Cleanup(func() { killPID(pid) })
		apptest.Eventually(t, fmt.Sprintf("server %d to end with the killed app", pid), func() (bool, string) { return !alive(pid), "" })
	}
}

// BenchmarkHostileSet compares headless Rootkeeper beside the hostile set
// with the same app beside the honest server only: its memory after the
// floods have run, and how long the honest server takes to be sent a new
// grant (from the grant command's return to the status showing it, polled
// every 5 ms). Run with -benchtime=5x.
func BenchmarkHostileSet(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("Linux only")
	}
	for _, withHostile := range []bool{false, true} {
		name := "honest-only"
		if withHostile {
			name = "with-hostile-set"
		}
		b.Run(name, func(b *testing.B) {
			hostile := hostileServer(b)
			honest := apptest.NPMServer(b, "mcp-server-filesystem")
			state, tree := b.TempDir(), b.TempDir()
			// keep stays granted, so that a revoke never empties the honest
			// server's set (which restarts it) and only a's grant is timed.
			a, keep := filepath.Join(tree, "a"), filepath.Join(tree, "keep")
			os.Mkdir(a, 0o755)
			os.Mkdir(keep, 0o755)
			run := func(args ...string) {
				cmd := exec.Command(binary, append([]string{"--state-dir", state}, args...)...)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%q: %v %s", args, err, out)
				}
			}
			run("servers", "add", "honest", "--", honest)
			if withHostile {
				for mode, args := range hostileModes(filepath.Join(tree, "escaped.pid")) {
					run(append([]string{"servers", "add", "hostile-" + mode, "--", hostile}, args...)...)
				}
			}
			run("roots", "add", a, "--enable")
			run("roots", "add", keep, "--enable")
			run("grant", "honest", keep)
			cmd := exec.Command(binary, "--state-dir", state, "headless")
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() {
				cmd.Process.Signal(syscall.SIGTERM)
				cmd.Wait()
				if data, err := os.ReadFile(filepath.Join(tree, "escaped.pid")); err == nil {
					pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
					killPID(pid)
				}
			}()
			sent := func() []string {
				out, err := exec.Command(binary, "--state-dir", state, "status", "--json").Output()
				if err != nil {
					return nil
				}
				var st struct {
					Servers []struct {
						Name string
						Live *app.ServerStatus
					}
				}
				json.Unmarshal(out, &st)
				for _, s := range st.Servers {
					if s.Name == "honest" && s.Live != nil && s.Live.State == app.ServerConnected {
						return s.Live.LastSent
					}
				}
				return nil
			}
			// A look runs status: every 5 ms at most, the measure's
			// resolution.
			poll := apptest.Poll{Every: 5 * time.Millisecond}
			sends := func(what string, want ...string) {
				slices.Sort(want)
				poll.Eventually(b, "the honest server sent "+what, func() (bool, string) {
					got := sent()
					return slices.Equal(got, want), fmt.Sprint(got)
				})
			}
			uk := app.URIFromPath(keep)
			sends("keep", uk)
			time.Sleep(5 * time.Second) // the floods run: memory is measured after them
			ua := app.URIFromPath(a)
			var total time.Duration
			b.ResetTimer()
			for range b.N {
				run("grant", "honest", a)
				began := time.Now()
				sends("a and keep", ua, uk)
				total += time.Since(began)
				run("revoke", "honest", a)
				sends("keep alone", uk)
			}
			b.StopTimer()
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "grant-ms")
			b.ReportMetric(rssMB(b, cmd.Process.Pid), "rss-MiB")
			b.ReportMetric(peakMB(b, cmd.Process.Pid), "peak-MiB")
		})
	}
}

// A confined server's temp folder that took the state folder past its
// budget is emptied when the app starts (and every minute after), status
// says so, and the person's decisions stay.
func TestStateFolderBudget(t *testing.T) {
	state := t.TempDir()
	folder := t.TempDir()
	mustRun(t, state, "roots", "add", folder, "--enable")
	temp := filepath.Join(state, "tmp", "server-runaway")
	if err := os.MkdirAll(filepath.Join(temp, "deep"), 0o700); err != nil {
		t.Fatal(err)
	}
	junk, err := os.Create(filepath.Join(temp, "deep", "junk"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("runaway "), 1<<17) // 1 MiB, real blocks
	for range budget.DefaultLimit/len(chunk) + 8 {
		if _, err := junk.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	junk.Close()
	startHeadless(t, state)
	waitFor(t, "the runaway temp folder emptied", func() bool {
		entries, err := os.ReadDir(temp)
		return err == nil && len(entries) == 0
	})
	if size := dirSize(state); size > budget.DefaultLimit {
		t.Fatalf("state folder %d bytes after the trim", size)
	}
	var notice string
	waitFor(t, "the notice in status", func() bool {
		notice = liveStatus(t, state).Notices["state folder budget"]
		return notice != ""
	})
	if !strings.Contains(notice, "server-runaway") {
		t.Errorf("notice %q does not name the server's folder", notice)
	}
	if out := mustRun(t, state, "roots", "list"); !strings.Contains(out, folder) {
		t.Errorf("the roots went with the temp folder:\n%s", out)
	}
}

// A flood of the control socket (the review's: 1 MiB chunks with no
// newline, which took the app to 3.88 GB) leaves a running app's memory
// where it was: 16 clients send 64 MiB each, every one is cut off after
// 64 KiB, and the headless app's resident memory grows by a few MiB at
// most; it still answers status.
func TestControlSocketFloodKeepsTheAppSmall(t *testing.T) {
	state := t.TempDir()
	headless := startHeadless(t, state)
	waitFor(t, "the control socket", func() bool {
		_, _, code := rootkeeper(t, state, "status", "--json")
		return code == 0 && liveStatus(t, state).Running
	})
	before := rssMB(t, headless.cmd.Process.Pid)
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	var wg sync.WaitGroup
	var accepted atomic.Int64
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("unix", filepath.Join(state, "control.sock"))
			if err != nil {
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(30 * time.Second))
			for range 64 {
				n, err := c.Write(chunk)
				accepted.Add(int64(n))
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	after := rssMB(t, headless.cmd.Process.Pid)
	t.Logf("16 clients × 64 MiB: %d KiB taken in all; headless RSS %.1f → %.1f MiB", accepted.Load()>>10, before, after)
	if accepted.Load() > 16<<20 {
		t.Errorf("the app took %d MiB of a flood without newlines", accepted.Load()>>20)
	}
	if after-before > 16 {
		t.Errorf("headless RSS grew from %.1f to %.1f MiB under the flood", before, after)
	}
	if !liveStatus(t, state).Running {
		t.Error("status no longer reaches the app after the flood")
	}
}
