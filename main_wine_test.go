//go:build wine && linux

package main

// The core job on Windows, run under Wine: the Windows binary serves a
// granted folder to a Windows Go server and a revoke reaches it while it
// runs, answers the command line over its control pipe, relays a host
// through the bridge that `hosts protect` put in Claude Desktop's config
// (given back byte for byte by `hosts restore`), writes and removes its Run
// key, takes its servers with it when it is killed, and draws its window.
//
// .ci/platforms builds rootkeeper.exe, makes a Wine prefix and runs them:
//
//	RK_WINE_EXE=/path/rootkeeper.exe WINEPREFIX=/path/prefix go test -tags wine -run Wine .
//
// The same scenarios run natively are the anchor of the benchmarks
// (BenchmarkHeadlessFirstRoots, BenchmarkGrantToServer).

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/cli"
)

// wineWait bounds every wait of these tests: Wine starts a process in
// about half a second, a Go program in about a second.
const wineWait = 60 * time.Second

// underWine is how these tests wait for what has no event: within
// wineWait, a look every 200 ms at most (a look may run a process).
var underWine = apptest.Poll{Within: wineWait, Every: 200 * time.Millisecond}

// rig is Rootkeeper on one system, Windows under Wine or this one natively,
// with its own state folder, a rootserver built for that system, and the
// reports of the rootservers it runs.
type rig struct {
	tb      testing.TB
	wine    bool
	exe     string // rootkeeper (for Wine, the Linux path of the .exe)
	server  string // rootserver (idem)
	state   string // the state folder (a Linux path)
	reports *reportListener
}

var (
	wineServerOnce sync.Once
	wineServerExe  string
	wineServerErr  error
)

// wineRig is Rootkeeper for Windows under Wine: RK_WINE_EXE, and
// WINEPREFIX a prefix made ready by .ci/platforms (the Go runtime's
// bcryptprimitives.dll in place).
func wineRig(tb testing.TB) *rig {
	tb.Helper()
	exe := os.Getenv("RK_WINE_EXE")
	if exe == "" || os.Getenv("WINEPREFIX") == "" {
		tb.Fatal("RK_WINE_EXE (the Windows rootkeeper.exe) and WINEPREFIX are needed: run .ci/platforms")
	}
	wineServerOnce.Do(func() {
		// One folder per checkout, built again each run (from Go's cache).
		sum := sha256.Sum256([]byte(apptest.ModuleRoot(tb)))
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("rootkeeper-wine-testbin-%x", sum[:6]))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			wineServerErr = err
			return
		}
		wineServerExe = filepath.Join(dir, "rootserver.exe")
		build := exec.Command("go", "build", "-o", wineServerExe, "./mcp/testdata/rootserver")
		build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			wineServerErr = fmt.Errorf("building rootserver.exe: %v\n%s", err, out)
		}
	})
	if wineServerErr != nil {
		tb.Fatal(wineServerErr)
	}
	return newRig(tb, true, exe, wineServerExe)
}

// nativeRig is the same on this system: the anchor.
func nativeRig(tb testing.TB) *rig {
	return newRig(tb, false, binary, apptest.Program(tb, "mcp/testdata/rootserver"))
}

func newRig(tb testing.TB, wine bool, exe, server string) *rig {
	return &rig{tb: tb, wine: wine, exe: exe, server: server, state: filepath.Join(tb.TempDir(), "state"), reports: listenTCPReports(tb)}
}

// path is p as the program sees it: under Wine, on drive Z:.
func (r *rig) path(p string) string {
	if !r.wine {
		return p
	}
	return "Z:" + strings.ReplaceAll(p, "/", `\`)
}

// command is `rootkeeper --state-dir STATE args...`.
func (r *rig) command(args ...string) *exec.Cmd {
	return r.program(r.exe, append([]string{"--state-dir", r.path(r.state)}, args...)...)
}

// program runs exe (a Linux path) on the rig's system.
func (r *rig) program(exe string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if r.wine {
		cmd = exec.Command("wine", append([]string{exe}, args...)...)
	} else {
		cmd = exec.Command(exe, args...)
	}
	cmd.Env = wineEnv(false)
	return cmd
}

// wineEnv is this environment for a program under Wine: Wine's own
// messages off, and no display unless withDisplay.
func wineEnv(withDisplay bool) []string {
	var env []string
	for _, kv := range serverEnv() {
		if strings.HasPrefix(kv, "WINEDEBUG=") || !withDisplay && (strings.HasPrefix(kv, "DISPLAY=") || strings.HasPrefix(kv, "WAYLAND_DISPLAY=")) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "WINEDEBUG=-all")
}

// combined runs cmd and returns what it printed, stdout and stderr; a
// command still running after wineWait is killed, and one that leaves a
// process holding its output is not waited for.
func combined(cmd *exec.Cmd) ([]byte, error) {
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	kill := time.AfterFunc(wineWait, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	if !kill.Stop() {
		err = fmt.Errorf("still running after %s: %v", wineWait, err)
	}
	return []byte(out.String()), err
}

// rk runs rootkeeper and returns what it printed; it fails the test unless
// it exits 0.
func (r *rig) rk(args ...string) string {
	r.tb.Helper()
	out, err := combined(r.command(args...))
	if err != nil {
		r.tb.Fatalf("rootkeeper %s: %v\n%s%s", strings.Join(args, " "), err, out, r.wineSays(out, args))
	}
	return string(out)
}

// wineSays is, for a command that failed under Wine printing nothing
// (seen once in CI: exit 1 within 60 ms, before Rootkeeper could have
// printed anything), what Wine tells of the same command run again with
// its error messages on: the test fails either way, and this says why.
func (r *rig) wineSays(out []byte, args []string) string {
	if !r.wine || len(out) > 0 {
		return ""
	}
	cmd := r.command(args...)
	cmd.Env = append(slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "WINEDEBUG=") }), "WINEDEBUG=err+all")
	again, err := combined(cmd)
	const most = 8 << 10
	if len(again) > most {
		again = again[len(again)-most:]
	}
	return fmt.Sprintf("the same again with Wine's errors on (%v):\n%s", err, again)
}

// mkdir makes folder name in a temp folder and returns its path.
func (r *rig) mkdir(name string) string {
	r.tb.Helper()
	p := filepath.Join(r.tb.TempDir(), name)
	if err := os.Mkdir(p, 0o755); err != nil {
		r.tb.Fatal(err)
	}
	return p
}

// addRoot adds folder as an enabled root and returns its URI, as the
// program writes it.
func (r *rig) addRoot(folder string) string {
	r.tb.Helper()
	r.rk("roots", "add", r.path(folder), "--enable")
	var roots []struct{ Path, URI string }
	out := r.rk("roots", "list", "--json")
	if err := json.Unmarshal([]byte(out), &roots); err != nil {
		r.tb.Fatalf("roots list --json: %v\n%s", err, out)
	}
	for _, rt := range roots {
		if strings.EqualFold(rt.Path, r.path(folder)) {
			return rt.URI
		}
	}
	r.tb.Fatalf("root %s is not listed:\n%s", r.path(folder), out)
	return ""
}

// addServer adds a rootserver named name, speaking 2025-11-25 (the
// protocol version on which roots/list follows list_changed), reporting to
// the rig: `servers add NAME ADD... -- rootserver FLAGS...`.
func (r *rig) addServer(name string, add []string, flags ...string) {
	r.tb.Helper()
	args := append([]string{"servers", "add", name, "--env", "RK_REPORT=" + r.reports.addr}, add...)
	args = append(args, "--", r.path(r.server), "-name", name, "-version", "2025-11-25")
	r.rk(append(args, flags...)...)
}

// running is a long-running rootkeeper (headless, the GUI, a bridge).
type running struct {
	cmd    *exec.Cmd
	log    *syncBuffer
	exited chan struct{} // closed once it has exited, with err
	err    error
}

// start starts rootkeeper with args; it is killed when the test ends at
// the latest.
func (r *rig) start(cmd *exec.Cmd) *running {
	r.tb.Helper()
	p := &running{cmd: cmd, log: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.log
	// A process it left behind holding its stderr does not hold the test.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		r.tb.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	r.tb.Cleanup(func() {
		p.kill()
		if r.tb.Failed() {
			r.tb.Logf("%s log:\n%s", strings.Join(cmd.Args, " "), p.log.String())
		}
	})
	return p
}

// kill ends the process at once (SIGKILL: for a Windows program under
// Wine, the process ends as if killed from Task Manager) and waits for it.
func (p *running) kill() {
	p.cmd.Process.Kill()
	select {
	case <-p.exited:
	case <-time.After(wineWait):
	}
}

// waitLog waits until the process has logged a line holding s.
func (p *running) waitLog(tb testing.TB, s string) {
	tb.Helper()
	underWine.Eventually(tb, fmt.Sprintf("%q logged", s), func() (bool, string) {
		if strings.Contains(p.log.String(), s) {
			return true, ""
		}
		select {
		case <-p.exited:
			tb.Fatalf("exited (%v) before logging %q", p.err, s)
		default:
		}
		return false, ""
	})
}

// serverReport is a line a rootserver sent: NAME EVENT PAYLOAD.
type serverReport struct {
	server, event string
	payload       json.RawMessage
}

// reportListener takes rootserver reports over TCP (RK_REPORT=tcp:ADDR:
// Wine has no unix sockets): one channel per server name, and one closed
// when a report connection ends (its server exited).
type reportListener struct {
	addr   string
	mu     sync.Mutex
	chs    map[string]chan serverReport
	starts map[string]int // "start" reports by server: how often each started
	closed chan string    // the server name of a connection that ended
}

func listenTCPReports(tb testing.TB) *reportListener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	l := &reportListener{addr: "tcp:" + ln.Addr().String(), chs: map[string]chan serverReport{}, starts: map[string]int{}, closed: make(chan string, 100)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				sc.Buffer(nil, 1<<20)
				name := ""
				for sc.Scan() {
					f := strings.SplitN(sc.Text(), " ", 3)
					if len(f) == 3 {
						name = f[0]
						if f[1] == "start" {
							l.mu.Lock()
							l.starts[name]++
							l.mu.Unlock()
						}
						l.ch(name) <- serverReport{server: f[0], event: f[1], payload: json.RawMessage(f[2])}
					}
				}
				l.closed <- name
			}()
		}
	}()
	return l
}

// started is how many times server has started.
func (l *reportListener) started(server string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.starts[server]
}

func (l *reportListener) ch(name string) chan serverReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.chs[name] == nil {
		l.chs[name] = make(chan serverReport, 1000)
	}
	return l.chs[name]
}

// next waits for server's next report of event (others are skipped).
func (l *reportListener) next(tb testing.TB, server, event string) serverReport {
	tb.Helper()
	timeout := time.After(wineWait)
	for {
		select {
		case r := <-l.ch(server):
			if r.event == event {
				return r
			}
		case <-timeout:
			tb.Fatalf("no %q report from %s within %s", event, server, wineWait)
		}
	}
}

// expectRoots waits until server reports a roots/list answer of exactly
// uris (in any order); earlier answers are skipped.
func (l *reportListener) expectRoots(tb testing.TB, server string, uris ...string) {
	tb.Helper()
	want := slices.Sorted(slices.Values(uris))
	timeout := time.After(wineWait)
	var last []string
	for {
		select {
		case r := <-l.ch(server):
			if r.event == "rootserr" {
				tb.Fatalf("%s was refused its roots: %s", server, r.payload)
			}
			if r.event != "roots" {
				continue
			}
			last = nil
			json.Unmarshal(r.payload, &last)
			slices.Sort(last)
			if slices.Equal(last, want) {
				return
			}
		case <-timeout:
			tb.Fatalf("%s was not sent %v within %s (last sent %v)", server, want, wineWait, last)
		}
	}
}

// headless starts `rootkeeper headless`.
func (r *rig) headless() *running { return r.start(r.command("headless")) }

// liveStatus is `status --json`, which a running app answers over its
// control channel.
func (r *rig) liveStatus() cli.Status {
	r.tb.Helper()
	var st cli.Status
	out := r.rk("status", "--json")
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		r.tb.Fatalf("status --json: %v\n%s", err, out)
	}
	return st
}

// processesHolding lists the Linux processes whose command line holds
// every one of parts: under Wine, each Windows process is one.
func processesHolding(parts ...string) []int {
	matches, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []int
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil || len(b) == 0 {
			continue
		}
		line := string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(m)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestWineHeadlessServesAndFollowsTheCommandLine: `headless` serves a
// granted folder to a Windows server, answers `status` over its control
// pipe, a grant and a revoke typed while it runs reach the server
// (roots/list_changed, then the new list), and when the app is killed its
// server and the child the server started end with it (the job object).
func TestWineHeadlessServesAndFollowsTheCommandLine(t *testing.T) {
	r := wineRig(t)
	alpha, beta := r.mkdir("alpha"), r.mkdir("beta")
	alphaURI, betaURI := r.addRoot(alpha), r.addRoot(beta)
	r.addServer("rs", nil, "-spawn-child")
	r.rk("grant", "rs", r.path(alpha))

	h := r.headless()
	var started struct{ PID, Child int }
	json.Unmarshal(r.reports.next(t, "rs", "start").payload, &started)
	if started.Child == 0 {
		t.Fatal("the server did not start its child")
	}
	r.reports.expectRoots(t, "rs", alphaURI)

	// The command line reaches the app over its control pipe.
	st := r.liveStatus()
	sent, live := lastSent(st, "rs")
	if !st.Running || live == nil || live.State != app.ServerConnected || !slices.Equal(sent, []string{alphaURI}) {
		t.Fatalf("status from the running app: running %t, rs %+v; want connected and sent %s", st.Running, live, alphaURI)
	}

	r.rk("grant", "rs", r.path(beta))
	r.reports.expectRoots(t, "rs", alphaURI, betaURI)
	r.rk("revoke", "rs", r.path(alpha))
	r.reports.expectRoots(t, "rs", betaURI)
	// Told, not restarted: where Landlock is missing, a server confined by
	// default runs unconfined, and learns its roots as any other.
	if n := r.reports.started("rs"); n != 1 {
		t.Errorf("the server was started %d times; want once (a grant and a revoke are told to it)", n)
	}

	// Killed outright, the app takes its server and the server's child
	// with it: the server's report connection ends, and no rootserver of
	// this test is left.
	child := []string{filepath.Base(filepath.Dir(r.server)), "-idle"}
	if len(processesHolding(child...)) == 0 {
		t.Fatalf("the server's child is not found among the processes (%q)", child)
	}
	t.Cleanup(func() {
		for _, pid := range processesHolding(child...) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	h.kill()
	select {
	case <-r.reports.closed:
	case <-time.After(wineWait):
		t.Fatal("the server outlived the app")
	}
	underWine.Eventually(t, "the server's child gone with the app", func() (bool, string) {
		left := processesHolding(child...)
		return len(left) == 0, fmt.Sprintf("processes %v", left)
	})
}

// claudeConfig is a Claude Desktop config as Windows editors write it: a
// byte order mark and CRLF line ends.
func claudeConfig(server, report string) []byte {
	lines := []string{
		"{",
		`  "globalShortcut": "Ctrl+Space",`,
		`  "mcpServers": {`,
		`    "rs": {`,
		fmt.Sprintf(`      "command": %q,`, server),
		`      "args": ["-name", "rs", "-version", "2025-11-25"],`,
		fmt.Sprintf(`      "env": {"RK_REPORT": %q}`, report),
		`    }`,
		`  }`,
		"}",
		"",
	}
	return append([]byte("\ufeff"), strings.Join(lines, "\r\n")...)
}

// appData is %APPDATA% in the Wine prefix, as a Linux path.
func appData(tb testing.TB) string {
	tb.Helper()
	echo := exec.Command("wine", "cmd.exe", "/c", "echo %APPDATA%")
	echo.Env = wineEnv(false)
	out, err := combined(echo)
	if err != nil {
		tb.Fatalf("%%APPDATA%%: %v", err)
	}
	win := strings.TrimSpace(string(out))
	unix := exec.Command("winepath", "-u", win)
	unix.Env = wineEnv(false)
	out, err = combined(unix)
	if err != nil {
		tb.Fatalf("winepath -u %s: %v", win, err)
	}
	return strings.TrimSpace(string(out))
}

// TestWineClaudeDesktopProtectedBridgeRestored: `hosts protect` puts the
// bridge in Claude Desktop's config under %APPDATA%\Claude (its byte order
// mark and CRLF line ends kept); the protected entry, run as Claude
// Desktop runs it, relays the host to the server both ways, and the
// server's roots come from Rootkeeper; `hosts restore` gives the file back
// byte for byte.
func TestWineClaudeDesktopProtectedBridgeRestored(t *testing.T) {
	r := wineRig(t)
	dir := filepath.Join(appData(t), "Claude")
	path := filepath.Join(dir, "claude_desktop_config.json")
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("%s exists already: the Wine prefix is not this test's", path)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	original := claudeConfig(r.path(r.server), r.reports.addr)
	if err := os.WriteFile(path, original, 0o644); err != nil {
		t.Fatal(err)
	}

	if out := r.rk("hosts", "list", "--json"); !strings.Contains(out, `"claude-desktop"`) {
		t.Fatalf("hosts list does not find Claude Desktop's config:\n%s", out)
	}
	r.rk("hosts", "protect", "claude-desktop")
	protected, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(protected, []byte("\ufeff")) {
		t.Errorf("the byte order mark is gone:\n%q", protected)
	}
	if n, crlf := bytes.Count(protected, []byte("\n")), bytes.Count(protected, []byte("\r\n")); n != crlf {
		t.Errorf("%d of %d line ends are not CRLF:\n%q", n-crlf, n, protected)
	}
	if !bytes.Contains(protected, []byte(`"globalShortcut": "Ctrl+Space"`)) {
		t.Errorf("the rest of the file was not kept:\n%s", protected)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(bytes.TrimPrefix(protected, []byte("\ufeff")), &cfg); err != nil {
		t.Fatalf("the protected config is not JSON: %v\n%s", err, protected)
	}
	entry := cfg.MCPServers["rs"]
	if !strings.EqualFold(entry.Command, r.path(r.exe)) || !slices.Contains(entry.Args, "bridge") {
		t.Fatalf("the protected entry runs %q %q, want %s ... bridge rs", entry.Command, entry.Args, r.path(r.exe))
	}

	// The server is Rootkeeper's now, under the name the bridge is given.
	name := entry.Args[len(entry.Args)-1]
	folder := r.mkdir("proj")
	uri := r.addRoot(folder)
	r.rk("grant", name, r.path(folder))

	// Claude Desktop starts the entry's command with its args and env.
	env := wineEnv(false)
	for k, v := range entry.Env {
		env = append(env, k+"="+v)
	}
	host := startHost(t, env, "wine", append([]string{entry.Command}, entry.Args...)...)
	id := host.send("initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{"roots": map[string]any{"listChanged": true}},
		"clientInfo": map[string]any{"name": "claude-ai", "version": "0.1"},
	})
	if init, rpcErr := host.reply(id, wineWait); rpcErr != nil || !strings.Contains(string(init), `"name":"rootserver"`) {
		t.Fatalf("initialize was not answered by the server: %s %+v", init, rpcErr)
	}
	host.send("notifications/initialized", nil)
	r.reports.expectRoots(t, "rs", uri)
	if tools, rpcErr := host.reply(host.send("tools/list", nil), wineWait); rpcErr != nil || !strings.Contains(string(tools), `"name":"roots"`) {
		t.Fatalf("tools/list was not relayed to the server and back: %s %+v", tools, rpcErr)
	}

	r.rk("hosts", "restore", "claude-desktop")
	restored, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(restored, original) {
		t.Errorf("hosts restore did not give the file back byte for byte:\n got %q\nwant %q", restored, original)
	}
}

// runKey is where `autostart on` writes, read back with Wine's reg.
const runKey = `HKCU\Software\Microsoft\Windows\CurrentVersion\Run`

// TestWineAutostartWritesAndRemovesTheRunKey: `autostart on` writes the Run
// key's Rootkeeper value (the binary, starting in the tray); `off` removes
// it.
func TestWineAutostartWritesAndRemovesTheRunKey(t *testing.T) {
	r := wineRig(t)
	reg := func(args ...string) *exec.Cmd {
		cmd := exec.Command("wine", append([]string{"reg"}, args...)...)
		cmd.Env = wineEnv(false)
		return cmd
	}
	query := func() (string, error) {
		out, err := combined(reg("query", runKey, "/v", "Rootkeeper"))
		return string(out), err
	}
	if out, err := query(); err == nil {
		t.Fatalf("the Run key has a Rootkeeper value already: the Wine prefix is not this test's\n%s", out)
	}
	t.Cleanup(func() { combined(reg("delete", runKey, "/v", "Rootkeeper", "/f")) })
	r.rk("autostart", "on")
	out, err := query()
	if err != nil {
		t.Fatalf("reg query after autostart on: %v\n%s", err, out)
	}
	want := regexp.MustCompile(`(?m)^\s*Rootkeeper\s+REG_SZ\s+(.*)\r?$`).FindStringSubmatch(out)
	if want == nil || !strings.EqualFold(strings.TrimSpace(want[1]), r.path(r.exe)+" --hidden") {
		t.Fatalf("the Run key holds %q, want %q", out, r.path(r.exe)+" --hidden")
	}
	if st := r.rk("autostart", "status", "--json"); !strings.Contains(st, `"enabled": true`) {
		t.Errorf("autostart status after on: %s", st)
	}
	r.rk("autostart", "off")
	if out, err := query(); err == nil {
		t.Fatalf("the Run key still has the Rootkeeper value after autostart off:\n%s", out)
	}
}

// windowShot finds the top-level window named title on display and
// returns a screenshot of it (xwininfo and ImageMagick's import).
func windowShot(t *testing.T, display, title string) (image.Image, error) {
	t.Helper()
	out, err := combined(exec.Command("xwininfo", "-display", display, "-name", title))
	if err != nil {
		return nil, fmt.Errorf("no window %q: %v", title, err)
	}
	m := regexp.MustCompile(`Window id: (0x[0-9a-f]+)`).FindSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("xwininfo: %s", out)
	}
	shot, err := exec.Command("import", "-display", display, "-window", string(m[1]), "png:-").Output()
	if err != nil {
		return nil, fmt.Errorf("import: %v", err)
	}
	return png.Decode(bytes.NewReader(shot))
}

// inkBands counts the bands of rows of img, below top, that hold dark pixels (text)
// on the light theme's background: one band of rows per line of text.
func inkBands(img image.Image, top int) int {
	b := img.Bounds()
	bands, inBand := 0, false
	for y := b.Min.Y + top; y < b.Max.Y; y++ {
		ink := false
		for x := b.Min.X; x < b.Max.X && !ink; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			ink = (r+g+bl)/3 < 0x6000
		}
		if ink && !inBand {
			bands++
		}
		inBand = ink
	}
	return bands
}

// TestWineWindowDraws: under Wine and Xvfb the app opens its window (a
// process of its own, attached to the app through the control pipe's
// stream op), which draws the state's folders and follows a folder added
// from the command line. The tray icon is not checked: Wine shows no
// notification area without a desktop shell.
func TestWineWindowDraws(t *testing.T) {
	r := wineRig(t)
	display := apptest.XServer(t, "1280x800")
	r.addRoot(r.mkdir("alpha"))
	cmd := r.command()
	cmd.Env = append(wineEnv(true), "DISPLAY="+display)
	gui := r.start(cmd)
	gui.waitLog(t, "window on screen")

	var before image.Image
	underWine.Eventually(t, "the window drawn", func() (bool, string) {
		img, err := windowShot(t, display, "Rootkeeper")
		if err == nil && inkBands(img, 0) >= 4 {
			before = img
			return true, ""
		}
		return false, fmt.Sprint(err)
	})
	if b := before.Bounds(); b.Dx() < 600 || b.Dy() < 400 {
		t.Fatalf("the window is %dx%d", b.Dx(), b.Dy())
	}

	// A folder added from the command line shows in the open window: one
	// more row, two more lines of text.
	r.addRoot(r.mkdir("beta"))
	var after image.Image
	underWine.Eventually(t, "the window shows the folder added", func() (bool, string) {
		img, err := windowShot(t, display, "Rootkeeper")
		if err == nil && inkBands(img, 0) >= inkBands(before, 0)+2 {
			after = img
			return true, ""
		}
		return false, fmt.Sprintf("%d bands of text before, %v", inkBands(before, 0), err)
	})
	if dir := os.Getenv("RK_WINE_SHOTS"); dir != "" {
		f, err := os.Create(filepath.Join(dir, "window-wine.png"))
		if err == nil {
			png.Encode(f, after)
			f.Close()
		}
	}

	// The app killed, the window goes with it.
	gui.kill()
	underWine.Eventually(t, "the window gone with the app", func() (bool, string) {
		_, err := windowShot(t, display, "Rootkeeper")
		return err != nil, ""
	})
}

// headlessToFirstRoots is one run of `headless`, from its start to the
// first roots/list answer its server reports.
func headlessToFirstRoots(b *testing.B, r *rig, uri string) time.Duration {
	b.Helper()
	start := time.Now()
	h := r.headless()
	r.reports.expectRoots(b, "rs", uri)
	took := time.Since(start)
	h.stop(r)
	return took
}

// stop ends the app as its person would: SIGTERM natively; under Wine,
// where a console-less program gets no signal, by killing it (its servers
// end with it).
func (p *running) stop(r *rig) {
	if r.wine {
		p.kill()
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(wineWait):
		p.kill()
	}
}

// BenchmarkHeadlessFirstRoots: from `rootkeeper headless` starting to the
// first roots/list its one server is answered, under Wine and natively
// (the anchor), the server a Go program built for each.
func BenchmarkHeadlessFirstRoots(b *testing.B) {
	for _, sys := range []struct {
		name string
		rig  func(testing.TB) *rig
	}{{"native", nativeRig}, {"wine", wineRig}} {
		b.Run(sys.name, func(b *testing.B) {
			r := sys.rig(b)
			folder := r.mkdir("alpha")
			uri := r.addRoot(folder)
			// Unconfined on both: natively a confined server is
			// restarted for a grant, under Wine it is told.
			r.addServer("rs", []string{"--no-confine"})
			r.rk("grant", "rs", r.path(folder))
			var total time.Duration
			for b.Loop() {
				total += headlessToFirstRoots(b, r, uri)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/start")
		})
	}
}

// BenchmarkGrantToServer: from `rootkeeper grant` starting to the running
// app's server being sent the new list (list_changed, then roots/list),
// under Wine and natively (the anchor). The command line's own start is
// in it: it is what a person waits for.
func BenchmarkGrantToServer(b *testing.B) {
	for _, sys := range []struct {
		name string
		rig  func(testing.TB) *rig
	}{{"native", nativeRig}, {"wine", wineRig}} {
		b.Run(sys.name, func(b *testing.B) {
			r := sys.rig(b)
			alpha, beta := r.mkdir("alpha"), r.mkdir("beta")
			alphaURI, betaURI := r.addRoot(alpha), r.addRoot(beta)
			// Unconfined on both: natively a confined server is
			// restarted for a grant, under Wine it is told.
			r.addServer("rs", []string{"--no-confine"})
			r.rk("grant", "rs", r.path(alpha))
			h := r.headless()
			defer h.stop(r)
			r.reports.expectRoots(b, "rs", alphaURI)
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				r.rk("grant", "rs", r.path(beta))
				r.reports.expectRoots(b, "rs", alphaURI, betaURI)
				total += time.Since(start)
				b.StopTimer()
				r.rk("revoke", "rs", r.path(beta))
				r.reports.expectRoots(b, "rs", alphaURI)
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/grant")
		})
	}
}

// TestWinePolicyFromTheRegistry: the organisation's policy, as Group
// Policy puts it under HKLM\SOFTWARE\Policies\Rootkeeper (value Policy,
// the same JSON), binds rootkeeper.exe: doctor says where it is read from
// and what it sets, and a folder a neverGrant rule holds cannot be made a
// root.
func TestWinePolicyFromTheRegistry(t *testing.T) {
	r := wineRig(t)
	const key = `HKLM\SOFTWARE\Policies\Rootkeeper`
	reg := func(args ...string) ([]byte, error) {
		cmd := exec.Command("wine", append([]string{"reg"}, args...)...)
		cmd.Env = wineEnv(false)
		return combined(cmd)
	}
	if out, err := reg("query", key); err == nil {
		t.Fatalf("the Wine prefix has a Rootkeeper policy already:\n%s", out)
	}
	secret := r.mkdir("secret")
	policy := `{"neverGrant": ["` + strings.ReplaceAll(r.path(secret), `\`, `\\`) + `"]}`
	if out, err := reg("add", key, "/v", "Policy", "/t", "REG_SZ", "/d", policy, "/f"); err != nil {
		t.Fatalf("reg add: %v\n%s", err, out)
	}
	t.Cleanup(func() { reg("delete", key, "/f") })
	if out := r.rk("doctor"); !strings.Contains(out, `HKLM\SOFTWARE\Policies\Rootkeeper\Policy`) || !strings.Contains(out, "never granted") {
		t.Errorf("doctor under the registry's policy:\n%s", out)
	}
	out, err := combined(r.command("roots", "add", r.path(secret)))
	if err == nil || !strings.Contains(string(out), "set by your organisation") {
		t.Errorf("a root the registry's policy never grants: %v\n%s", err, out)
	}
	// Windows' names ignore case, and so does the rule.
	out, err = combined(r.command("roots", "add", strings.ToUpper(r.path(secret))))
	if err == nil || !strings.Contains(string(out), "set by your organisation") {
		t.Errorf("the same root in capitals: %v\n%s", err, out)
	}
}
