package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"rootkeeper/app/apptest"
)

// Claude Code for real: after `hosts protect claude-code`, `claude mcp
// list` connects to every server through the bridge (user and local scope)
// but fs, whose command line names a folder nobody decided yet: it is held
// until that folder is granted, then runs with it; and `hosts
// restore` gives back the entries although Claude Code rewrote its file
// meanwhile.
func TestHostsProtectWithClaudeCode(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the npm hosts are exercised on Linux")
	}
	claude := apptest.NPMServer(t, "claude")
	fsServer := apptest.NPMServer(t, "mcp-server-filesystem")
	everything := apptest.NPMServer(t, "mcp-server-everything")
	state, home := t.TempDir(), t.TempDir()
	home, _ = filepath.EvalSymlinks(home)
	work := filepath.Join(home, "src", "proj")
	os.MkdirAll(work, 0o755)
	config := map[string]any{
		"numStartups":            3,
		"hasCompletedOnboarding": true,
		"mcpServers": map[string]any{
			"fs":         map[string]any{"type": "stdio", "command": fsServer, "args": []string{work}, "env": map[string]string{}},
			"everything": map[string]any{"command": everything, "args": []string{}},
		},
		"projects": map[string]any{
			work: map[string]any{
				"allowedTools": []string{},
				"mcpServers": map[string]any{
					"local-fs": map[string]any{"type": "stdio", "command": fsServer},
				},
			},
		},
	}
	orig, _ := json.MarshalIndent(config, "", "  ")
	path := filepath.Join(home, ".claude.json")
	if err := os.WriteFile(path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(serverEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	rk := func(args ...string) string {
		t.Helper()
		return rkIn(t, env, state, args...)
	}
	claudeRun := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(claude, args...)
		cmd.Dir = work
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %q: %v\n%s", args, err, out)
		}
		return string(out)
	}

	out := rk("hosts", "protect", "claude-code")
	if !strings.Contains(out, "backup: ") {
		t.Fatalf("protect said:\n%s", out)
	}
	list := claudeRun("mcp", "list")
	tag := ""
	for _, line := range strings.Split(list, "\n") {
		if strings.HasPrefix(line, "local-fs: ") {
			tag = line
		}
	}
	for _, name := range []string{"claude-code.fs", "claude-code.everything"} {
		want := binary + " --state-dir " + state + " bridge " + name
		if !strings.Contains(list, want) {
			t.Errorf("claude mcp list does not show %q:\n%s", want, list)
		}
	}
	if !strings.Contains(tag, binary+" --state-dir "+state+" bridge claude-code.proj-") {
		t.Errorf("local-scope server not bridged:\n%s", list)
	}
	// fs is configured with a folder nobody has decided: it is held, and
	// Claude Code says why, in its own list.
	if n := strings.Count(list, "Connected"); n != 2 || !strings.Contains(list, "waiting for your decision on "+work) {
		t.Fatalf("claude mcp list: %d connected, want 2 and fs held:\n%s", n, list)
	}

	// The folder on fs's command line is asked about, not shared.
	var st struct {
		Servers []struct {
			Name     string
			Visible  []any
			Requests []struct{ Path, From string }
		}
	}
	if err := json.Unmarshal([]byte(rk("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range st.Servers {
		if s.Name == "claude-code.fs" {
			for _, r := range s.Requests {
				found = found || r.Path == work
			}
		}
		if len(s.Visible) != 0 {
			t.Errorf("%s sees %v before anything was granted", s.Name, s.Visible)
		}
	}
	if !found {
		t.Errorf("fs's command-line folder is not a request: %+v", st.Servers)
	}

	// Allowed: fs runs as it was configured, with its folder.
	rk("grant", "claude-code.fs", work)
	if list := claudeRun("mcp", "list"); strings.Count(list, "Connected") != 3 {
		t.Fatalf("after the grant, claude mcp list:\n%s", list)
	}

	hosts := rk("hosts", "list", "--json")
	var found2 []struct {
		ID        string
		Servers   int
		Protected int
	}
	if err := json.Unmarshal([]byte(hosts), &found2); err != nil || len(found2) != 1 || found2[0].Protected != 3 {
		t.Fatalf("hosts list --json: %v\n%s", err, hosts)
	}

	// Claude Code rewrote its file while running (counters, caches):
	// restore puts back the servers and keeps what Claude wrote.
	rk("hosts", "restore", "claude-code")
	back, _ := os.ReadFile(path)
	var before, after map[string]any
	json.Unmarshal(orig, &before)
	if err := json.Unmarshal(back, &after); err != nil {
		t.Fatalf("restored file does not parse: %v\n%s", err, back)
	}
	if d := cmp.Diff(before["mcpServers"], after["mcpServers"]); d != "" {
		t.Errorf("user servers not restored (-want +got):\n%s", d)
	}
	local := func(m map[string]any) any {
		p, _ := m["projects"].(map[string]any)
		w, _ := p[work].(map[string]any)
		return w["mcpServers"]
	}
	if d := cmp.Diff(local(before), local(after)); d != "" {
		t.Errorf("local servers not restored (-want +got):\n%s", d)
	}
	if list := claudeRun("mcp", "list"); strings.Contains(list, "bridge") || !slices.ContainsFunc(strings.Split(list, "\n"), func(l string) bool { return strings.HasPrefix(l, "fs: "+fsServer) }) {
		t.Errorf("after restore, claude mcp list:\n%s", list)
	}
}
