package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"rootkeeper/app/apptest"
)

// The bridge with real hosts: the MCP Inspector CLI and Claude Code, each
// starting `rootkeeper bridge fs` in front of the real server-filesystem.

// inspector runs the pinned Inspector CLI's tools/call of tool against the
// command, and returns its output. The pinned 1.0.3 looks for its
// package.json relative to the working folder, so it runs from its own
// build folder.
func inspector(t *testing.T, tool string, command ...string) string {
	t.Helper()
	build := filepath.Join(apptest.ModuleRoot(t), ".ci", "npm", "node_modules", "@modelcontextprotocol", "inspector-cli", "build")
	if _, err := os.Stat(filepath.Join(build, "cli.js")); err != nil {
		t.Fatalf("the Inspector CLI is not installed (run .ci/setup): %v", err)
	}
	args := append([]string{"cli.js", "--cli"}, command...)
	args = append(args, "--method", "tools/call", "--tool-name", tool)
	cmd := exec.Command("node", args...)
	cmd.Dir = build
	cmd.Env = serverEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("inspector: %v\n%s", err, out)
	}
	return string(out)
}

// allowedDirectories is what server-filesystem says it may read, through
// the bridge, as the Inspector CLI sees it.
func allowedDirectories(t *testing.T, state string) []string {
	t.Helper()
	out := inspector(t, "list_allowed_directories", binary, "--state-dir", state, "bridge", "fs")
	i := strings.Index(out, `"text": "Allowed directories:\n`)
	if i < 0 {
		t.Fatalf("no answer in:\n%s", out)
	}
	rest := out[i+len(`"text": "Allowed directories:\n`):]
	rest = rest[:strings.Index(rest, `"`)]
	var dirs []string
	for _, d := range strings.Split(rest, `\n`) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs)
	return dirs
}

func TestBridgeWithTheInspector(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the npm hosts are exercised on Linux")
	}
	state, tree := t.TempDir(), t.TempDir()
	a, b := filepath.Join(tree, "a"), filepath.Join(tree, "b c")
	os.Mkdir(a, 0o755)
	os.Mkdir(b, 0o755)
	mustRun(t, state, "servers", "add", "fs", "--", apptest.NPMServer(t, "mcp-server-filesystem"))
	mustRun(t, state, "roots", "add", a, "--enable")
	mustRun(t, state, "roots", "add", b, "--enable")
	if got := allowedDirectories(t, state); len(got) != 0 {
		t.Fatalf("before any grant the server may read %q", got)
	}
	mustRun(t, state, "grant", "fs", a)
	if got := allowedDirectories(t, state); !slices.Equal(got, []string{a}) {
		t.Fatalf("after granting a: %q", got)
	}
	mustRun(t, state, "grant", "fs", b)
	if got := allowedDirectories(t, state); !slices.Equal(got, []string{a, b}) {
		t.Fatalf("after granting b: %q", got)
	}
	mustRun(t, state, "revoke", "fs", a)
	if got := allowedDirectories(t, state); !slices.Equal(got, []string{b}) {
		t.Fatalf("after revoking a: %q", got)
	}
	mustRun(t, state, "pause")
	if got := allowedDirectories(t, state); len(got) != 0 {
		t.Fatalf("while paused: %q", got)
	}
	mustRun(t, state, "resume")
	// A decision for this app run only counts while an app runs.
	mustRun(t, state, "grant", "fs", a, "--until-quit")
	if got := allowedDirectories(t, state); !slices.Equal(got, []string{b}) {
		t.Fatalf("an until-quit grant counted with no app running: %q", got)
	}
}

// The real server-everything over streamable HTTP (its own Express
// server), bridged for the Inspector CLI: the server asks the bridge for
// roots on its event streams and gets exactly the granted folder, and a
// grant between two sessions shows.
func TestBridgeHTTPWithTheInspector(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the npm hosts are exercised on Linux")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv := exec.Command(apptest.NPMServer(t, "mcp-server-everything"), "streamableHttp")
	srv.Env = append(serverEnv(), fmt.Sprintf("PORT=%d", port))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	apptest.Eventually(t, fmt.Sprintf("server-everything to listen on %d", port), func() (bool, string) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			return false, err.Error()
		}
		c.Close()
		return true, ""
	})
	state, tree := t.TempDir(), t.TempDir()
	a, b := filepath.Join(tree, "a"), filepath.Join(tree, "b")
	os.Mkdir(a, 0o755)
	os.Mkdir(b, 0o755)
	mustRun(t, state, "servers", "add", "every", "--url", fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	mustRun(t, state, "roots", "add", a, "--enable")
	mustRun(t, state, "roots", "add", b, "--enable")
	mustRun(t, state, "grant", "every", a)
	uris := func() []string {
		out := inspector(t, "get-roots-list", binary, "--state-dir", state, "bridge", "every")
		var got []string
		for _, f := range strings.Fields(strings.ReplaceAll(out, `\n`, " ")) {
			if strings.HasPrefix(f, "file://") {
				got = append(got, strings.TrimRight(f, `",`))
			}
		}
		if !strings.Contains(out, "Current MCP Roots") {
			t.Fatalf("no roots answer in:\n%s", out)
		}
		slices.Sort(got)
		return got
	}
	if got := uris(); !slices.Equal(got, []string{"file://" + a}) {
		t.Fatalf("with a granted, the server got %q", got)
	}
	mustRun(t, state, "grant", "every", b)
	if got := uris(); !slices.Equal(got, []string{"file://" + a, "file://" + b}) {
		t.Fatalf("with a and b granted, the server got %q", got)
	}
}

// Claude Code, pointed at a home of the test's: `claude mcp list` connects
// to the bridged server, and its working folder becomes a request for fs,
// not a root fs sees, until it is granted.
func TestBridgeWithClaudeCode(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the npm hosts are exercised on Linux")
	}
	claude := apptest.NPMServer(t, "claude")
	state, home := t.TempDir(), t.TempDir()
	work := filepath.Join(home, "src", "project x")
	os.MkdirAll(work, 0o755)
	mustRun(t, state, "servers", "add", "fs", "--", apptest.NPMServer(t, "mcp-server-filesystem"))
	run := func(args ...string) string {
		cmd := exec.Command(claude, args...)
		cmd.Dir = work
		cmd.Env = append(serverEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	entry, _ := json.Marshal(map[string]any{"command": binary, "args": []string{"--state-dir", state, "bridge", "fs"}})
	run("mcp", "add-json", "-s", "user", "fs", string(entry))
	out := run("mcp", "list")
	if !strings.Contains(out, "fs: "+binary) || !strings.Contains(out, "Connected") {
		t.Fatalf("claude mcp list:\n%s", out)
	}
	visible, _ := visibleFor(t, state, "fs")
	var requested []string
	for _, s := range liveStatus(t, state).Servers {
		if s.Name == "fs" {
			for _, r := range s.Requests {
				requested = append(requested, r.Path)
				if !strings.HasPrefix(r.From, "claude-code") {
					t.Errorf("the request comes from %q", r.From)
				}
			}
		}
	}
	if !slices.Equal(requested, []string{work}) || len(visible) != 0 {
		t.Fatalf("after claude mcp list: requests %q, visible %q; want the working folder requested and nothing visible", requested, visible)
	}
	mustRun(t, state, "grant", "fs", work)
	if visible, _ := visibleFor(t, state, "fs"); !slices.Equal(visible, []string{work}) {
		t.Fatalf("after granting the request: visible %q", visible)
	}
}

// A bridge session shows in the running app, and `bridge` of an unknown
// server exits 2 at once, before reading its stdin.
func TestBridgeSessionShowsInTheApp(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("unix sockets")
	}
	state := t.TempDir()
	mustRun(t, state, "servers", "add", "fs", "--", apptest.NPMServer(t, "mcp-server-filesystem"))

	unknown := exec.Command(binary, "--state-dir", state, "bridge", "nope")
	stdin, _ := unknown.StdinPipe() // never closed: the refusal must not wait for it
	defer stdin.Close()
	done := make(chan error, 1)
	var errOut strings.Builder
	unknown.Stderr = &errOut
	unknown.Start()
	go func() { done <- unknown.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(errOut.String(), `"nope"`) {
			t.Fatalf("bridge nope: %v, stderr %q", err, errOut.String())
		}
	case <-time.After(apptest.Patience):
		unknown.Process.Kill()
		t.Fatal("bridge of an unknown server waited on its stdin")
	}

	startHeadless(t, state)
	waitFor(t, "the app", func() bool { return liveStatus(t, state).Running })
	br := exec.Command(binary, "--state-dir", state, "bridge", "fs")
	in, _ := br.StdinPipe()
	outPipe, _ := br.StdoutPipe()
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); br.Wait() }()
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test-host","version":"7"}}}`+"\n")
	if line, err := bufio.NewReader(outPipe).ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("initialize through the bridge: %q %v", line, err)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	waitFor(t, "the session to show in status", func() bool {
		for _, s := range liveStatus(t, state).Bridges {
			if s.Server == "fs" && s.Host == "test-host" && s.HostVersion == "7" && s.ProtocolVersion == "2025-06-18" && s.PID > 0 {
				return true
			}
		}
		return false
	})
	if out := mustRun(t, state, "status"); !strings.Contains(out, "bridged for test-host 7 (protocol 2025-06-18, server pid ") {
		t.Errorf("status does not show the session:\n%s", out)
	}
}

// A bridge's stderr is its host's: when it writes the state (the host's
// folder becomes a request) and no keyring takes another server's secret,
// the warning, which names that server and its variable, goes to the
// running app's log, and doctor says it; the host hears nothing of it.
func TestBridgeSpeaksOnlyOfItsOwnServer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("unix sockets")
	}
	env := append(serverEnv(), "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	state, work := t.TempDir(), t.TempDir()
	rkIn(t, env, state, "servers", "add", "other", "--env", "GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "--", "/nonexistent/other-mcp")
	rkIn(t, env, state, "servers", "add", "mine", "--", apptest.Program(t, "mcp/testdata/hostile"), "-mode", "honest")
	h := startHeadlessIn(t, env, state)
	waitFor(t, "the app", func() bool { return liveStatus(t, state).Running })

	br := exec.Command(binary, "--state-dir", state, "bridge", "mine")
	br.Env = env
	var errOut syncBuffer
	br.Stderr = &errOut
	in, _ := br.StdinPipe()
	outPipe, _ := br.StdoutPipe()
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); br.Wait() }()
	// The host: it has roots, and answers the bridge's roots/list with its
	// working folder.
	go func() {
		r := bufio.NewReader(outPipe)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal([]byte(line), &m) == nil && m.Method == "roots/list" {
				fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%s,"result":{"roots":[{"uri":"file://%s"}]}}`+"\n", m.ID, work)
			}
		}
	}()
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"test-host","version":"1"}}}`+"\n")
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	waitFor(t, "the host's folder requested for mine", func() bool {
		for _, s := range liveStatus(t, state).Servers {
			for _, r := range s.Requests {
				if s.Name == "mine" && r.Path == work {
					return true
				}
			}
		}
		return false
	})
	waitFor(t, "the warning in the app's log", func() bool {
		logs := h.logText()
		return strings.Contains(logs, `from="bridge mine"`) && strings.Contains(logs, `"other"`) && strings.Contains(logs, "GITHUB_TOKEN")
	})
	in.Close()
	br.Wait()
	if s := errOut.String(); strings.Contains(s, "other") || strings.Contains(s, "GITHUB_TOKEN") {
		t.Errorf("the bridge told its host of another server:\n%s", s)
	}
	if out, _, _ := rootkeeper(t, state, "doctor"); !strings.Contains(out, "other env GITHUB_TOKEN") {
		t.Errorf("doctor does not name the secret left in state.json:\n%s", out)
	}
}
