package bridge

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/audit"
	"rootkeeper/mcp"
	"rootkeeper/mcp/confine"
)

// A held-out host is a process of its own, as a real host is: the
// benchmark's process talks over OS pipes either to the server or to a
// bridge process (this test binary, started again with heldOutBridgeEnv),
// which starts the server. In-process pipes (io.Pipe) would measure the
// Go scheduler's hand-offs, not the pipes and process wake-ups a host and
// a bridge pay.

// heldOutBridgeEnv names the state folder a bridge process of this test
// binary serves from; heldOutProfileEnv, a file for its CPU profile.
const (
	heldOutBridgeEnv  = "RK_BENCH_BRIDGE_STATE"
	heldOutProfileEnv = "RK_BENCH_BRIDGE_CPUPROFILE"
)

func init() {
	if dir := os.Getenv(heldOutBridgeEnv); dir != "" {
		os.Exit(heldOutBridge(dir))
	}
}

// heldOutBridge is `rootkeeper bridge fs` on state folder dir, its roots
// taken as checked: the bridge as the host starts it.
func heldOutBridge(dir string) int {
	if path := os.Getenv(heldOutProfileEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		runtime.SetCPUProfileRate(2000)
		pprof.StartCPUProfile(f)
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	store, err := app.OpenStore(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	core, err := app.NewCore(store)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, r := range core.Snapshot().State.Roots {
		core.SetHealth(r.Path, app.Health{Status: app.HealthOK})
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer cancel()
	a := audit.NewLog(dir)
	defer a.Close()
	if err := Run(ctx, Options{Core: core, Server: "fs", HostIn: os.Stdin, HostOut: os.Stdout, Stderr: io.Discard,
		Audit: a, StateDir: dir, StopGrace: time.Second, KillAfter: time.Second,
		WithoutReach: os.Getenv("RK_BENCH_WITHOUT_REACH") != ""}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// heldOutHost is the benchmark's side of one session: it writes requests
// and reads their responses, skipping anything else.
type heldOutHost struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

// heldOutSession starts server (argv) as a held-out host would see it:
// mode "direct" runs it, "direct-confined" runs it confined and observed
// (no bridge), "bridged" and "bridged-confined" run a bridge process that
// starts it.
func heldOutSession(b *testing.B, mode string, server []string) *heldOutHost {
	b.Helper()
	var cmd *exec.Cmd
	started := func() {}
	// An experiment: mode+NAME=VALUE+… sets the bridge's environment.
	parts := strings.Split(mode, "+")
	mode, extra := parts[0], parts[1:]
	// MODE@NETWORK: the server's network setting (off, ask, only, open;
	// only allows one name it never reaches).
	mode, netMode, _ := strings.Cut(mode, "@")
	var network *app.NetworkSetting
	if netMode != "" {
		network = &app.NetworkSetting{Mode: app.NetworkMode(netMode)}
		if network.Mode == app.NetworkOnly {
			network.Allow = []string{"example.com:443"}
		}
	}
	// base-MODE runs the bridge of another build of this test binary
	// (RK_BENCH_BASE_BIN), to compare two versions in the same run.
	bin := os.Args[0]
	if m, ok := strings.CutPrefix(mode, "base-"); ok {
		mode, bin = m, os.Getenv("RK_BENCH_BASE_BIN")
	}
	switch mode {
	case "direct", "direct-confined":
		cmd = exec.Command(server[0], server[1:]...)
		if mode == "direct-confined" {
			srv := app.Server{Name: "fs", Type: app.TransportStdio, Command: server[0], Args: server[1:], Confine: true}
			_, obs, err := mcp.ObserveCommand(cmd, srv, []string{b.TempDir()}, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			started = func() { obs.Start(func(context.Context, confine.Attempt) string { return "" }) }
			b.Cleanup(func() { obs.Close() })
		}
	case "bridged", "bridged-confined":
		core, dir := apptest.NewCore(b)
		root := b.TempDir()
		if err := core.Update(func(s *app.State) error {
			if _, err := s.PutServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: server[0], Args: server[1:],
				Confine: mode == "bridged-confined", Network: network}, app.PutOptions{Given: app.SetConfine}); err != nil {
				return err
			}
			return apptest.Share(s, "fs", app.Root{Path: root})
		}); err != nil {
			b.Fatal(err)
		}
		argv := []string{bin}
		if w := os.Getenv("RK_BENCH_WRAP"); w != "" && mode == os.Getenv("RK_BENCH_PROFILE_MODE") {
			// A tool to run the bridge under (strace -c -f, perf record).
			argv = append(strings.Fields(w), argv...)
		}
		cmd = exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(append(os.Environ(), heldOutBridgeEnv+"="+dir), extra...)
		if p := os.Getenv(heldOutProfileEnv); p != "" && mode == os.Getenv("RK_BENCH_PROFILE_MODE") {
			cmd.Env = append(cmd.Env, heldOutProfileEnv+"="+p)
		} else {
			cmd.Env = append(cmd.Env, heldOutProfileEnv+"=")
		}
	default:
		b.Fatalf("no mode %q", mode)
	}
	cmd.Stderr = os.Stderr
	// As Node's child_process gives its children (the hosts people use
	// are Node programs): a socket pair for stdin, another for stdout.
	in, childIn := socketPair(b)
	out, childOut := socketPair(b)
	cmd.Stdin, cmd.Stdout = childIn, childOut
	err := cmd.Start()
	started()
	childIn.Close()
	childOut.Close()
	if err != nil {
		b.Fatal(err)
	}
	h := &heldOutHost{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	b.Cleanup(h.close)
	h.call(b, `"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	return h
}

// socketPair returns the two ends of a socket pair: the first pollable
// (the host's end), the second as a child is given it.
func socketPair(b *testing.B) (*os.File, *os.File) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	syscall.SetNonblock(fds[0], true)
	return os.NewFile(uintptr(fds[0]), "host"), os.NewFile(uintptr(fds[1]), "child")
}

// call sends a request with the given members after its id and waits for
// its response.
func (h *heldOutHost) call(b *testing.B, rest string) {
	h.id++
	id := strconv.Itoa(h.id)
	if _, err := io.WriteString(h.in, `{"jsonrpc":"2.0","id":`+id+`,`+rest+"}\n"); err != nil {
		b.Fatal(err)
	}
	want := []byte(`"id":` + id + `}`)
	want2 := []byte(`"id":` + id + `,`)
	for {
		line, err := h.out.ReadSlice('\n')
		if err != nil {
			b.Fatalf("reading the response to %s: %v", id, err)
		}
		if bytes.Contains(line, want) || bytes.Contains(line, want2) {
			if bytes.Contains(line, []byte(`"error"`)) && !bytes.Contains(line, []byte(`"result"`)) {
				b.Fatalf("request %s: %s", id, line)
			}
			return
		}
	}
}

// cpu is the time the process has run, on all its threads, and how many
// times it was put on a CPU (Linux schedstat: load does not change them
// much, unlike the latencies).
func (h *heldOutHost) cpu() (ran time.Duration, slices int64) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", h.cmd.Process.Pid))
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		f := strings.Fields(string(data))
		if len(f) == 3 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			n, _ := strconv.ParseInt(f[2], 10, 64)
			ran += time.Duration(ns)
			slices += n
		}
	}
	return ran, slices
}

func (h *heldOutHost) close() {
	h.in.Close()
	done := make(chan struct{})
	go func() { h.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		h.cmd.Process.Signal(syscall.SIGTERM)
		<-done
	}
}

// BenchmarkHeldOutEcho is server-everything's echo tool called by a
// held-out host straight and through a bridge process, unconfined and
// confined (observed, as Rootkeeper runs it), the sessions open side by
// side and called in turn so that each sees the same machine. It reports
// each mode's p50-µs and p99-µs and what each adds over direct at p50 and
// p99: the goal for bridged-confined is +50 µs at p50, +0.5 ms at p99.
func BenchmarkHeldOutEcho(b *testing.B) {
	if _, err := confine.ABI(); err != nil {
		b.Fatalf("Landlock: %v", err)
	}
	server := []string{apptest.NPMServer(b, "mcp-server-everything")}
	modes := []string{"direct", "direct-confined", "bridged", "bridged-confined"}
	if m := os.Getenv("RK_BENCH_MODES"); m != "" {
		modes = strings.Split(m, ",")
	}
	hosts := make([]*heldOutHost, len(modes))
	for i, m := range modes {
		hosts[i] = heldOutSession(b, m, server)
	}
	const echo = `"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}`
	for range 200 { // warm the servers' JITs
		for i := range modes {
			hosts[i].call(b, echo)
		}
	}
	d := make([][]time.Duration, len(modes))
	cpu0 := make([]time.Duration, len(modes))
	slices0 := make([]int64, len(modes))
	for i := range modes {
		cpu0[i], slices0[i] = hosts[i].cpu()
	}
	b.ResetTimer()
	for n := range b.N {
		for k := range modes {
			i := (n + k) % len(modes) // no mode always first or last
			began := time.Now()
			hosts[i].call(b, echo)
			d[i] = append(d[i], time.Since(began))
		}
	}
	b.StopTimer()
	for i, m := range modes {
		if strings.Contains(m, "bridged") {
			// The bridge's own process (its server is a process of its own).
			ran, n := hosts[i].cpu()
			b.ReportMetric(float64((ran-cpu0[i]).Nanoseconds())/1000/float64(b.N), m+"-cpu-µs/call")
			b.ReportMetric(float64(n-slices0[i])/float64(b.N), m+"-wakes/call")
		}
	}
	direct50, direct99 := micros(apptest.Percentile(d[0], 0.5)), micros(apptest.Percentile(d[0], 0.99))
	for i, m := range modes {
		p50, p99 := micros(apptest.Percentile(d[i], 0.5)), micros(apptest.Percentile(d[i], 0.99))
		b.ReportMetric(p50, m+"-p50-µs")
		b.ReportMetric(p99, m+"-p99-µs")
		if i > 0 {
			b.ReportMetric(p50-direct50, m+"-added-p50-µs")
			b.ReportMetric(p99-direct99, m+"-added-p99-µs")
		}
	}
	b.ReportMetric(0, "ns/op")
}

func micros(d time.Duration) float64 { return float64(d.Microseconds()) }
