package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// A server's own folders through the binary: held until decided, then run
// exactly as configured, by the managed clients and through the bridge, and
// after `hosts protect`.

// testHost is a host speaking to a command (`rootkeeper bridge NAME`) over
// its stdin and stdout, one JSON-RPC message a line.
type testHost struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan string
	nextI  int
	stderr syncBuffer // what the bridge (and its server) wrote there, for a failure's message
}

// stderrTail is the end of what the command wrote to its stderr.
func (h *testHost) stderrTail() string {
	s := h.stderr.String()
	if len(s) > 4000 {
		s = "…" + s[len(s)-4000:]
	}
	return s
}

func startHost(t *testing.T, env []string, command string, args ...string) *testHost {
	t.Helper()
	h := &testHost{t: t, cmd: exec.Command(command, args...), lines: make(chan string, 64)}
	h.cmd.Env = env
	h.in, _ = h.cmd.StdinPipe()
	out, _ := h.cmd.StdoutPipe()
	h.cmd.Stderr = &h.stderr
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				close(h.lines)
				return
			}
			h.lines <- line
		}
	}()
	t.Cleanup(func() {
		h.in.Close()
		done := make(chan struct{})
		go func() { h.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(apptest.Patience):
			h.cmd.Process.Kill()
			<-done
		}
	})
	return h
}

// send writes a request (or, with no id, a notification) and returns its id.
func (h *testHost) send(method string, params any) int {
	h.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	id := 0
	if !strings.HasPrefix(method, "notifications/") {
		h.nextI++
		id = h.nextI
		msg["id"] = id
	}
	data, _ := json.Marshal(msg)
	if _, err := h.in.Write(append(data, '\n')); err != nil {
		h.t.Fatalf("writing %s: %v", method, err)
	}
	return id
}

// reply waits up to d for the answer to request id, answering the
// server's roots/list with no roots on the way.
func (h *testHost) reply(id int, d time.Duration) (result json.RawMessage, rpcErr *struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}) {
	h.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case line, ok := <-h.lines:
			if !ok {
				h.t.Fatalf("the bridge closed its output before answering %d; its stderr:\n%s", id, h.stderrTail())
			}
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal([]byte(line), &msg) != nil {
				continue
			}
			if msg.Method == "roots/list" && len(msg.ID) > 0 {
				fmt.Fprintf(h.in, `{"jsonrpc":"2.0","id":%s,"result":{"roots":[]}}`+"\n", msg.ID)
				continue
			}
			if msg.Method == "" && string(msg.ID) == fmt.Sprint(id) {
				return msg.Result, msg.Error
			}
		case <-deadline:
			h.t.Fatalf("no answer to request %d within %v; the bridge's stderr:\n%s", id, d, h.stderrTail())
		}
	}
}

// initialize is the host's handshake.
func (h *testHost) initialize(d time.Duration) (json.RawMessage, string) {
	h.t.Helper()
	id := h.send("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"roots": map[string]any{}},
		"clientInfo": map[string]any{"name": "test-host", "version": "1"}})
	res, rerr := h.reply(id, d)
	if rerr != nil {
		return nil, rerr.Message
	}
	h.send("notifications/initialized", nil)
	return res, ""
}

// gitStatus calls git-mcp-server's git_status on path and returns its text.
func (h *testHost) gitStatus(path string) string {
	h.t.Helper()
	id := h.send("tools/call", map[string]any{"name": "git_status", "arguments": map[string]any{"path": path}})
	res, rerr := h.reply(id, 30*time.Second)
	if rerr != nil {
		return "error: " + rerr.Message
	}
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	json.Unmarshal(res, &r)
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// gitTree is a home with ~/work/inside and ~/elsewhere/outside, both git
// repositories.
func gitTree(t *testing.T) (home, work, inside, outside string) {
	home = apptest.RealTempDir(t)
	work = filepath.Join(home, "work")
	inside, outside = filepath.Join(work, "inside"), filepath.Join(home, "elsewhere", "outside")
	for _, dir := range []string{inside, outside} {
		os.MkdirAll(dir, 0o755)
		for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %q: %v\n%s", args, err, out)
			}
		}
	}
	return home, work, inside, outside
}

// checkGitLimit: outside GIT_BASE_DIR refused, inside answered.
func checkGitLimit(t *testing.T, h *testHost, inside, outside string) {
	t.Helper()
	if out := h.gitStatus(outside); !strings.Contains(out, "Path traversal") {
		t.Errorf("git_status outside GIT_BASE_DIR answered: %q", out)
	}
	if out := h.gitStatus(inside); !strings.Contains(out, `"success": true`) {
		t.Errorf("git_status inside GIT_BASE_DIR: %q", out)
	}
}

// The real git-mcp-server, configured with GIT_BASE_DIR, through the
// bridge: with no app running, and with the app running headless (nobody to
// ask), the host's initialize gets at once an error naming the folder and
// the command that allows it; with the app and its window, the session
// waits and a grant lets the same session go on; then the server keeps its
// own limit.
func TestHeldBridgeAnswersTheHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the npm servers are exercised on Linux")
	}
	git := apptest.NPMServer(t, "git-mcp-server")
	state := t.TempDir()
	_, work, inside, outside := gitTree(t)
	mustRun(t, state, "servers", "add", "git", "--env", "GIT_BASE_DIR="+work, "--", git)

	h := startHost(t, serverEnv(), binary, "--state-dir", state, "bridge", "git")
	began := time.Now()
	_, msg := h.initialize(2 * time.Second)
	if !strings.Contains(msg, "waiting for your decision on "+work) || !strings.Contains(msg, "rootkeeper grant git "+work) {
		t.Fatalf("initialize of a held server with no app: %q", msg)
	}
	t.Logf("held error after %v", time.Since(began))

	app := startHeadless(t, state)
	waitFor(t, "the app", func() bool { return liveStatus(t, state).Running })
	h = startHost(t, serverEnv(), binary, "--state-dir", state, "bridge", "git")
	if _, msg := h.initialize(2 * time.Second); !strings.Contains(msg, "waiting for your decision on "+work) {
		t.Fatalf("initialize of a held server with the app headless: %q", msg)
	}
	if err := app.stop(); err != nil {
		t.Fatal(err)
	}

	startGUIApp(t, state)
	h = startHost(t, serverEnv(), binary, "--state-dir", state, "bridge", "git")
	id := h.send("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test-host", "version": "1"}})
	waitFor(t, "the held session to show in the app", func() bool {
		for _, b := range liveStatus(t, state).Bridges {
			if b.Server == "git" && strings.Contains(b.Held, work) {
				return true
			}
		}
		return false
	})
	if out := mustRun(t, state, "status"); !strings.Contains(out, "held, not started: waiting for your decision on "+work) {
		t.Errorf("status does not say the server is held:\n%s", out)
	}
	mustRun(t, state, "grant", "git", work)
	if _, rerr := h.reply(id, 10*time.Second); rerr != nil {
		t.Fatalf("initialize after the grant: %+v", rerr)
	}
	h.send("notifications/initialized", nil)
	checkGitLimit(t, h, inside, outside)
}

// After `hosts protect` of a Claude Desktop and a Claude Code config, the
// git server their entries start keeps GIT_BASE_DIR: held before the grant,
// limited after it.
func TestProtectKeepsTheServersOwnLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the npm servers are exercised on Linux")
	}
	git := apptest.NPMServer(t, "git-mcp-server")
	home, work, inside, outside := gitTree(t)
	env := append(serverEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	entry := map[string]any{"command": git, "env": map[string]string{"GIT_BASE_DIR": work}}
	files := map[string]string{
		"claude-desktop": filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"),
		"claude-code":    filepath.Join(home, ".claude.json"),
	}
	for host, path := range files {
		t.Run(host, func(t *testing.T) {
			state := t.TempDir()
			os.MkdirAll(filepath.Dir(path), 0o755)
			orig, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"git": entry}}, "", "  ")
			if err := os.WriteFile(path, orig, 0o600); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(path)
			rk := func(args ...string) string {
				t.Helper()
				return rkIn(t, env, state, args...)
			}
			out := rk("hosts", "protect", host)
			if !strings.Contains(out, "configured with "+work+" ($GIT_BASE_DIR)") {
				t.Errorf("protect said:\n%s", out)
			}
			// Start what the host would start now.
			var cfg struct {
				MCPServers map[string]struct {
					Command string            `json:"command"`
					Args    []string          `json:"args"`
					Env     map[string]string `json:"env"`
				} `json:"mcpServers"`
			}
			data, _ := os.ReadFile(path)
			if err := json.Unmarshal(data, &cfg); err != nil {
				t.Fatal(err)
			}
			e := cfg.MCPServers["git"]
			if e.Command != binary {
				t.Fatalf("not bridged: %+v", e)
			}
			hostEnv := env
			for k, v := range e.Env {
				hostEnv = append(hostEnv, k+"="+v)
			}
			name := host + ".git"
			h := startHost(t, hostEnv, e.Command, e.Args...)
			if _, msg := h.initialize(2 * time.Second); !strings.Contains(msg, "waiting for your decision on "+work) {
				t.Fatalf("initialize before the grant: %q", msg)
			}
			rk("grant", name, work)
			h = startHost(t, hostEnv, e.Command, e.Args...)
			if _, msg := h.initialize(30 * time.Second); msg != "" {
				t.Fatalf("initialize after the grant: %s", msg)
			}
			checkGitLimit(t, h, inside, outside)
			rk("hosts", "restore", host)
			if back, _ := os.ReadFile(path); string(back) != string(orig) {
				t.Errorf("restore did not give the bytes back:\n%s", back)
			}
		})
	}
}

// A server taking its folder as `--repository DIR --verbose` (and refusing
// a malformed command line) is held before the grant and runs with exactly
// that command line after it.
func TestFlagFolderIsKeptInPlace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("shell test server")
	}
	state, repo := t.TempDir(), t.TempDir()
	dump := filepath.Join(t.TempDir(), "args")
	server := writeScript(t, `if [ "$1" != --repository ] || [ ! -d "$2" ] || [ "$3" != --verbose ]; then
  echo "malformed command line: $*" >&2; exit 2
fi
printf '%s\n' "$@" > "$DUMP"
INFO='{"name":"argy","version":"1"}'
`+mcpShell)
	out := mustRun(t, state, "servers", "add", "argy", "--no-confine", "--env", "DUMP="+dump, "--", server, "--repository", repo, "--verbose")
	if !strings.Contains(out, "configured with the folder "+repo+" (--repository)") {
		t.Errorf("servers add said:\n%s", out)
	}
	startHeadless(t, state)
	waitFor(t, "argy to be held", func() bool {
		_, live := lastSent(liveStatus(t, state), "argy")
		return live != nil && live.State == app.ServerHeld
	})
	if _, err := os.Stat(dump); err == nil {
		t.Fatal("argy started before the grant")
	}
	mustRun(t, state, "grant", "argy", repo)
	waitFor(t, "argy to connect", func() bool {
		_, live := lastSent(liveStatus(t, state), "argy")
		return live != nil && live.State == app.ServerConnected
	})
	if data, _ := os.ReadFile(dump); string(data) != "--repository\n"+repo+"\n--verbose\n" {
		t.Errorf("argy ran with %q", data)
	}
}

// `import --replace` keeps a server confined (it states no confinement
// of its own), as every other edit path does.
func TestImportReplaceKeepsConfinement(t *testing.T) {
	state := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {"fs": {"command": "mcp-server-filesystem", "args": ["--x"]}}}`), 0o644)
	mustRun(t, state, "servers", "add", "fs", "--confine", "--", "mcp-server-filesystem")
	mustRun(t, state, "import", "--replace", cfg)
	var list []struct {
		Name    string `json:"name"`
		Confine bool   `json:"confine"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, state, "servers", "list", "--json")), &list); err != nil || len(list) != 1 || !list[0].Confine {
		t.Errorf("after import --replace: %+v %v", list, err)
	}
}
