package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"rootkeeper/app/apptest"
	"rootkeeper/app/hosts"
)

// realHost is a host that installs from npm and has its own `mcp add` and
// `mcp list`: how to add a server with it, list its servers, and where its
// file lands in a home (some under a variable the host honours, which
// Rootkeeper must honour too).
type realHost struct {
	id, bin string
	// env are variables set for the host and for rootkeeper, relative
	// to the home ("GEMINI_CLI_HOME=gh").
	env  []string
	add  func(cmd string, args ...string) []string
	list []string
	// file is the host's config file, relative to the home.
	file string
}

var realHosts = []realHost{
	{id: "copilot", bin: "copilot", env: []string{"COPILOT_HOME=copilot-home"}, file: "copilot-home/mcp-config.json",
		add:  func(c string, a ...string) []string { return append([]string{"mcp", "add", "fs", "--", c}, a...) },
		list: []string{"mcp", "get", "fs"}},
	{id: "opencode", bin: "opencode", file: ".config/opencode/opencode.jsonc",
		add:  func(c string, a ...string) []string { return append([]string{"mcp", "add", "fs", "--", c}, a...) },
		list: []string{"mcp", "list"}},
	{id: "qwen", bin: "qwen", env: []string{"QWEN_HOME=qwen-home"}, file: "qwen-home/settings.json",
		add:  func(c string, a ...string) []string { return append([]string{"mcp", "add", "fs", c}, a...) },
		list: []string{"mcp", "list"}},
	{id: "gemini", bin: "gemini", env: []string{"GEMINI_CLI_HOME=gemini-home"}, file: "gemini-home/.gemini/settings.json",
		add: func(c string, a ...string) []string {
			return append([]string{"mcp", "add", "-s", "user", "fs", c}, a...)
		},
		list: []string{"mcp", "list"}},
	{id: "codex", bin: "codex", env: []string{"CODEX_HOME=codex-home"}, file: "codex-home/config.toml",
		add:  func(c string, a ...string) []string { return append([]string{"mcp", "add", "fs", "--", c}, a...) },
		list: []string{"mcp", "list"}},
	{id: "augment", bin: "auggie", file: ".augment/settings.json",
		add: func(c string, a ...string) []string {
			return []string{"mcp", "add", "fs", "--command", c, "--args", strings.Join(a, " ")}
		},
		list: []string{"mcp", "list", "--json"}},
}

// Each host for real: its own CLI adds a server, `hosts protect` puts it
// behind the bridge, the host's CLI still reads its file and lists the
// server running the bridge, and `hosts restore` gives the file back byte
// for byte.
func TestHostsProtectWithRealHosts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the npm hosts are exercised on Linux")
	}
	fsServer := apptest.NPMServer(t, "mcp-server-filesystem")
	for _, rh := range realHosts {
		t.Run(rh.id, func(t *testing.T) {
			t.Parallel()
			host := apptest.NPMServer(t, rh.bin)
			state, home := t.TempDir(), t.TempDir()
			home, _ = filepath.EvalSymlinks(home)
			work := filepath.Join(home, "src", "proj")
			os.MkdirAll(work, 0o755)
			env := append(serverEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
			for _, kv := range rh.env {
				k, v, _ := strings.Cut(kv, "=")
				os.MkdirAll(filepath.Join(home, v), 0o755)
				env = append(env, k+"="+filepath.Join(home, v))
			}
			run := func(name string, args ...string) string {
				t.Helper()
				cmd := exec.Command(name, args...)
				cmd.Dir, cmd.Env = work, env
				cmd.Stdin = nil
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s %q: %v\n%s", filepath.Base(name), args, err, out)
				}
				return string(out)
			}
			rk := func(args ...string) string {
				t.Helper()
				return run(binary, append([]string{"--state-dir", state}, args...)...)
			}

			run(host, rh.add(fsServer, work)...)
			// A host may migrate its file the first time it reads it
			// (Qwen Code adds "$version"): that is the file protect
			// starts from.
			run(host, rh.list...)
			path := filepath.Join(home, rh.file)
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%s did not write %s: %v", rh.id, rh.file, err)
			}
			if out := rk("hosts", "list"); !strings.Contains(out, path) || !strings.Contains(out, "fs ") {
				t.Fatalf("hosts list does not find %s's fs in %s:\n%s", rh.id, path, out)
			}

			out := rk("hosts", "protect", rh.id)
			name := rh.id + ".fs"
			if !strings.Contains(out, "fs bridged as "+name) || !strings.Contains(out, "configured with "+work) {
				t.Fatalf("protect said:\n%s", out)
			}
			// The host reads its file again and shows the bridge.
			list := run(host, rh.list...)
			if !strings.Contains(list, "bridge") || !strings.Contains(list, name) {
				t.Errorf("%s %q after protect does not show the bridge:\n%s", rh.bin, rh.list, list)
			}
			if strings.Contains(list, fsServer) {
				t.Errorf("%s still runs the server itself:\n%s", rh.id, list)
			}

			rk("hosts", "restore", rh.id)
			if back, _ := os.ReadFile(path); !bytes.Equal(back, orig) {
				t.Errorf("restore is not byte for byte:\n%s\nwant\n%s", back, orig)
			}
			if list := run(host, rh.list...); strings.Contains(list, name) {
				t.Errorf("after restore %s still shows the bridge:\n%s", rh.id, list)
			}
		})
	}
}

// Protection that stays, with the real Claude Code: a host kept with
// `hosts protect claude-code --keep` adds a server with its own `claude mcp
// add-json` while a headless app runs; the app protects it again, says so
// in `status` (naming the folder its env gives it), and `claude mcp list`
// shows it through the bridge.
func TestHostsKeepWithClaudeCode(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the npm hosts are exercised on Linux")
	}
	claude := apptest.NPMServer(t, "claude")
	fsServer := apptest.NPMServer(t, "mcp-server-filesystem")
	everything := apptest.NPMServer(t, "mcp-server-everything")
	state, home := t.TempDir(), t.TempDir()
	home, _ = filepath.EvalSymlinks(home)
	notes := filepath.Join(home, "notes")
	os.MkdirAll(notes, 0o755)
	path := filepath.Join(home, ".claude.json")
	os.WriteFile(path, []byte(`{"numStartups": 1, "hasCompletedOnboarding": true, "mcpServers": {"everything": {"type": "stdio", "command": "`+everything+`", "args": []}}}`), 0o600)
	env := append(serverEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = home, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", filepath.Base(name), args, err, out)
		}
		return string(out)
	}
	rk := func(args ...string) string {
		t.Helper()
		return run(binary, append([]string{"--state-dir", state}, args...)...)
	}
	if out := rk("hosts", "protect", "claude-code", "--keep"); !strings.Contains(out, "kept: ") {
		t.Fatalf("protect --keep said:\n%s", out)
	}

	app := exec.Command(binary, "--state-dir", state, "headless")
	app.Env = env
	var logs bytes.Buffer
	app.Stderr = &logs
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- app.Wait() }()
	t.Cleanup(func() {
		app.Process.Signal(syscall.SIGTERM)
		<-exited
		if t.Failed() {
			t.Logf("headless log:\n%s", logs.String())
		}
	})
	waitFor(t, "the app to run", func() bool { return liveStatus(t, state).Running })

	run(claude, "mcp", "add-json", "-s", "user", "fs", `{"type":"stdio","command":"`+fsServer+`","args":[],"env":{"NOTES_DIR":"`+notes+`"}}`)
	bridged := func() bool {
		var v struct {
			McpServers map[string]struct{ Command string } `json:"mcpServers"`
		}
		data, _ := os.ReadFile(path)
		return json.Unmarshal(data, &v) == nil && v.McpServers["fs"].Command == binary
	}
	waitFor(t, "fs protected again", bridged)

	topic := hosts.NoticePrefix + path
	var notice string
	waitFor(t, "the notice", func() bool {
		notice = liveStatus(t, state).Notices[topic]
		return strings.Contains(notice, "protected it again")
	})
	for _, want := range []string{"a new server fs", "given " + notes + " in $NOTES_DIR"} {
		if !strings.Contains(notice, want) {
			t.Errorf("notice %q lacks %q", notice, want)
		}
	}
	if out := rk("status"); !strings.Contains(out, "a new server fs") {
		t.Errorf("status does not tell:\n%s", out)
	}
	// Allowed its folder, fs runs through the bridge (held until then,
	// Claude Code would wait for the decision).
	rk("grant", "claude-code.fs", notes)
	list := run(claude, "mcp", "list")
	want := "fs: " + binary + " --state-dir " + state + " bridge claude-code.fs - "
	if !slices.ContainsFunc(strings.Split(list, "\n"), func(l string) bool {
		return strings.HasPrefix(l, want) && strings.HasSuffix(l, "Connected")
	}) {
		t.Errorf("claude mcp list does not show fs through the bridge (%q):\n%s", want, list)
	}
}
