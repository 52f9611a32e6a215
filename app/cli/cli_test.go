package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"rootkeeper/app"
)

// harness runs commands in-process against one state folder, as a person
// would type them in one shell.
type harness struct {
	t     *testing.T
	dir   string // --state-dir
	cwd   string
	stdin string
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, dir: t.TempDir(), cwd: t.TempDir()}
}

type result struct {
	code           int
	stdout, stderr string
}

func (h *harness) run(args ...string) result {
	h.t.Helper()
	var out, errOut bytes.Buffer
	full := append([]string{"--state-dir", h.dir}, args...)
	code := Run(context.Background(), full, Env{
		Stdin: strings.NewReader(h.stdin), Stdout: &out, Stderr: &errOut, Cwd: h.cwd, Home: h.cwd,
	}, Extensions{})
	return result{code, out.String(), errOut.String()}
}

// ok runs a command that must succeed.
func (h *harness) ok(args ...string) string {
	h.t.Helper()
	r := h.run(args...)
	if r.code != 0 {
		h.t.Fatalf("%q: exit %d: %s", args, r.code, r.stderr)
	}
	return r.stdout
}

// fails runs a command that must fail with code and a one-line message
// containing each of wants.
func (h *harness) fails(code int, args []string, wants ...string) {
	h.t.Helper()
	before, _ := os.ReadFile(filepath.Join(h.dir, app.StateFileName))
	r := h.run(args...)
	if r.code != code {
		h.t.Fatalf("%q: exit %d, want %d (stderr %q)", args, r.code, code, r.stderr)
	}
	if strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "rootkeeper: ") {
		h.t.Fatalf("%q: want one line on stderr, got %q", args, r.stderr)
	}
	for _, w := range wants {
		if !strings.Contains(r.stderr, w) {
			h.t.Fatalf("%q: stderr %q does not name %q", args, r.stderr, w)
		}
	}
	after, _ := os.ReadFile(filepath.Join(h.dir, app.StateFileName))
	if !bytes.Equal(before, after) {
		h.t.Fatalf("%q: a failed command changed the saved state", args)
	}
}

func (h *harness) folder(name string) string {
	h.t.Helper()
	p := filepath.Join(h.cwd, name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) status() Status {
	h.t.Helper()
	var st Status
	if err := json.Unmarshal([]byte(h.ok("status", "--json")), &st); err != nil {
		h.t.Fatal(err)
	}
	return st
}

func (st Status) visible(server string) []string {
	for _, s := range st.Servers {
		if s.Name == server {
			var out []string
			for _, r := range s.Visible {
				out = append(out, r.Path)
			}
			return out
		}
	}
	return nil
}

func TestRootsVerbs(t *testing.T) {
	h := newHarness(t)
	a := h.folder("alpha")
	b := h.folder("beta gamma#1")
	h.ok("roots", "add", "alpha") // relative to the current folder
	h.ok("roots", "add", b, "--name", "beta", "--enable")

	var roots []rootView
	if err := json.Unmarshal([]byte(h.ok("roots", "list", "--json")), &roots); err != nil {
		t.Fatal(err)
	}
	if len(roots) != 2 {
		t.Fatalf("roots = %+v", roots)
	}
	byName := map[string]rootView{}
	for _, r := range roots {
		byName[r.Name] = r
	}
	if r := byName["alpha"]; r.Path != a || r.Enabled || r.Health != "ok" || r.URI != app.URIFromPath(a) || len(r.SharedWith) != 0 {
		t.Fatalf("alpha = %+v", r)
	}
	if r := byName["beta"]; r.Path != b || !r.Enabled || !strings.Contains(r.URI, "beta%20gamma%231") {
		t.Fatalf("beta = %+v", r)
	}

	h.ok("roots", "enable", "alpha")
	h.ok("roots", "disable", b)
	json.Unmarshal([]byte(h.ok("roots", "list", "--json")), &roots)
	for _, r := range roots {
		if r.Enabled != (r.Name == "alpha") {
			t.Fatalf("after enable/disable: %+v", r)
		}
	}
	if out := h.ok("roots", "list"); !strings.Contains(out, "alpha") || !strings.Contains(out, "NAME") {
		t.Fatalf("text list: %q", out)
	}
	h.ok("roots", "remove", "beta")
	json.Unmarshal([]byte(h.ok("roots", "list", "--json")), &roots)
	if len(roots) != 1 || roots[0].Name != "alpha" {
		t.Fatalf("after remove: %+v", roots)
	}
}

func TestRootsAddWarnsAboutRiskyFolders(t *testing.T) {
	h := newHarness(t)
	os.MkdirAll(filepath.Join(h.cwd, ".ssh"), 0o700)
	r := h.run("roots", "add", h.cwd) // the harness's home folder
	if r.code != 0 || !strings.Contains(r.stderr, "home folder itself") || !strings.Contains(r.stderr, ".ssh") {
		t.Fatalf("adding the home folder: %+v", r)
	}
	if r := h.run("roots", "add", h.folder("plain")); r.code != 0 || r.stderr != "" {
		t.Fatalf("adding a plain folder: %+v", r)
	}
}

func TestRootsBadInput(t *testing.T) {
	h := newHarness(t)
	h.folder("x")
	os.WriteFile(filepath.Join(h.cwd, "file.txt"), nil, 0o644)
	h.ok("roots", "add", "x")
	h.fails(2, []string{"roots", "add", "does-not-exist"}, "does-not-exist")
	h.fails(2, []string{"roots", "add", "file.txt"}, "file.txt", "not a folder")
	h.fails(2, []string{"roots", "add", "x"}, "already added")
	h.fails(2, []string{"roots", "add"}, "PATH")
	h.fails(2, []string{"roots", "add", "x", "y"}, `"y"`)
	h.fails(2, []string{"roots", "add", "x", "--colour"}, "--colour")
	h.fails(2, []string{"roots", "add", "x", "--name"}, "--name")
	h.fails(2, []string{"roots", "enable", "nope"}, `"nope"`)
	h.fails(2, []string{"roots", "remove", "/no/such/root"}, "/no/such/root")
	h.fails(2, []string{"roots", "frobnicate"}, "frobnicate")
	h.fails(2, []string{"roots"}, "roots")

	// Two roots with one name: the name is ambiguous, the path is not.
	h.folder("a/x")
	h.ok("roots", "add", "a/x")
	h.fails(2, []string{"roots", "enable", "x"}, `"x"`, "ambiguous")
	h.ok("roots", "enable", "a/x")
}

func TestServersVerbs(t *testing.T) {
	h := newHarness(t)
	h.ok("servers", "add", "fs", "--env", "A=1", "--cwd", ".", "--roots-mode", "args", "--",
		"npx", "-y", "@modelcontextprotocol/server-filesystem", "--state-dir", "x")
	h.ok("servers", "add", "web", "--url", "https://mcp.example.com/mcp", "--header", "Authorization=Bearer t")
	h.ok("servers", "add", "old", "--url", "http://localhost:8080/sse", "--type", "sse", "--roots-mode", "off")

	var servers []app.Server
	if err := json.Unmarshal([]byte(h.ok("servers", "list", "--json")), &servers); err != nil {
		t.Fatal(err)
	}
	want := []app.Server{
		{Name: "fs", Type: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "--state-dir", "x"},
			Env: map[string]string{"A": "1"}, Cwd: h.cwd, Confine: true, RootsMode: app.RootsArgs, // confined by default
			DataProgram: "npm @modelcontextprotocol/server-filesystem", // its data folder is the package's
			// Known to need no network, run by npx: only npx's registry.
			Network: &app.NetworkSetting{Mode: app.NetworkOnly, Allow: []string{"registry.npmjs.org:443"}}},
		{Name: "old", Type: "sse", URL: "http://localhost:8080/sse", RootsMode: app.RootsOff},
		// The token went to the keyring (secrets_test.go's Secret Service).
		{Name: "web", Type: "http", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer keyring:rootkeeper/web/header/Authorization/0"}},
	}
	if len(servers) != len(want) {
		t.Fatalf("servers = %+v", servers)
	}
	for i := range want {
		gotJSON, _ := json.Marshal(servers[i])
		wantJSON, _ := json.Marshal(want[i])
		if string(gotJSON) != string(wantJSON) {
			t.Fatalf("server %d:\n got %s\nwant %s", i, gotJSON, wantJSON)
		}
	}
	if out := h.ok("servers", "list"); !strings.Contains(out, "npx -y") {
		t.Fatalf("text list: %q", out)
	}
	h.ok("servers", "remove", "old")
	json.Unmarshal([]byte(h.ok("servers", "list", "--json")), &servers)
	if len(servers) != 2 {
		t.Fatalf("after remove: %+v", servers)
	}
}

func TestServersBadInput(t *testing.T) {
	h := newHarness(t)
	h.ok("servers", "add", "fs", "--", "cmd")
	h.fails(2, []string{"servers", "add", "fs", "--", "cmd"}, `"fs"`, "already exists")
	h.fails(2, []string{"servers", "add", "x"}, `"x"`, "--url")
	h.fails(2, []string{"servers", "add", "x", "--url", "ftp://h/p"}, "ftp://h/p")
	h.fails(2, []string{"servers", "add", "x", "--url", "not a url"}, "not a url")
	h.fails(2, []string{"servers", "add", "x", "--url", "http://h", "--type", "grpc"}, "grpc")
	h.fails(2, []string{"servers", "add", "x", "--roots-mode", "sometimes", "--", "cmd"}, "sometimes")
	h.fails(2, []string{"servers", "add", "x", "--url", "http://h", "--roots-mode", "args"}, "args")
	h.fails(2, []string{"servers", "add", "x", "--url", "http://h", "--", "cmd"}, "not both")
	h.fails(2, []string{"servers", "add", "x", "--env", "NOEQUALS", "--", "cmd"}, "NOEQUALS")
	h.fails(2, []string{"servers", "add", "x", "--cwd", "/no/such", "--", "cmd"}, "/no/such")
	h.fails(2, []string{"servers", "add", "x", "--url", "http://h", "--header", "Bad Name=v"}, "Bad Name")
	h.fails(2, []string{"servers", "add", "-bad", "--", "cmd"}, "-bad")
	h.fails(2, []string{"servers", "remove", "ghost"}, "ghost")
}

func TestGrantRevokePauseStatus(t *testing.T) {
	h := newHarness(t)
	a, b := h.folder("a"), h.folder("b")
	h.ok("roots", "add", a, "--enable")
	h.ok("roots", "add", b, "--enable")
	h.ok("servers", "add", "fs", "--", "cmd")
	h.ok("servers", "add", "other", "--", "cmd")

	// Adding roots exposes nothing: both are undecided for every server.
	st := h.status()
	if st.Running || len(st.visible("fs")) != 0 || len(st.Servers[0].Pending) != 2 {
		t.Fatalf("before any grant: %+v", st)
	}
	h.ok("grant", "fs", "a")
	h.ok("grant", "fs", b, "--until-quit")
	h.ok("deny", "other", "a")
	st = h.status()
	if got := st.visible("fs"); !slices.Equal(got, []string{a, b}) {
		t.Fatalf("fs sees %q", got)
	}
	if got := st.visible("other"); len(got) != 0 {
		t.Fatalf("other sees %q after a deny", got)
	}
	if p := st.Servers[1].Pending; len(p) != 1 || p[0].Path != b {
		t.Fatalf("other's pending = %+v, want only b (a was denied)", p)
	}

	store, _ := app.OpenStore(h.dir)
	saved, _ := store.Load()
	if d, _ := saved.Decision("fs", b); d.Scope != app.UntilQuit || d.By != app.ByCommandLine {
		t.Fatalf("decision for b = %+v", d)
	}

	h.ok("pause")
	if st := h.status(); !st.Paused || len(st.visible("fs")) != 0 {
		t.Fatalf("paused: %+v", st)
	}
	if out := h.ok("status"); !strings.Contains(out, "PAUSED") {
		t.Fatalf("text status while paused: %q", out)
	}
	h.ok("resume")
	if got := h.status().visible("fs"); len(got) != 2 {
		t.Fatalf("after resume fs sees %q", got)
	}
	if out := h.ok("revoke", "fs", "a"); !strings.Contains(out, "revoked") {
		t.Fatalf("revoke said %q", out)
	}
	if got := h.status().visible("fs"); !slices.Equal(got, []string{b}) {
		t.Fatalf("after revoke fs sees %q", got)
	}
	if out := h.ok("revoke", "fs", "a"); !strings.Contains(out, "nothing to revoke") {
		t.Fatalf("second revoke said %q", out)
	}
	// A root that disappears is withdrawn at once, even from the CLI's view.
	os.Remove(b)
	if got := h.status().visible("fs"); len(got) != 0 {
		t.Fatalf("fs still sees a deleted folder: %q", got)
	}

	h.fails(2, []string{"grant", "ghost", "a"}, "ghost")
	h.fails(2, []string{"grant", "fs", "nowhere"}, "nowhere")
	h.fails(2, []string{"grant", "fs"}, "ROOT")
	h.fails(2, []string{"revoke", "ghost", "a"}, "ghost")
	h.fails(2, []string{"pause", "now"}, "now")
	h.fails(2, []string{"status", "--yaml"}, "--yaml")
}

func TestImport(t *testing.T) {
	h := newHarness(t)
	claude := `{
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]},
    "github": {"command": "docker", "args": ["run", "-i", "ghcr.io/github/github-mcp-server"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "x"}},
    "remote": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer k"}},
    "off": {"command": "x", "disabled": true}
  }
}`
	os.WriteFile(filepath.Join(h.cwd, "claude.json"), []byte(claude), 0o644)
	if out := h.ok("import", "claude.json"); !strings.Contains(out, "imported 3") {
		t.Fatalf("import said %q", out)
	}
	vscode := `{
  // VS Code allows comments
  "servers": {
    "events": {"type": "sse", "url": "http://localhost:3001/sse",},
  },
}`
	h.stdin = vscode
	h.ok("import", "-")
	var servers []app.Server
	json.Unmarshal([]byte(h.ok("servers", "list", "--json")), &servers)
	var names []string
	for _, s := range servers {
		names = append(names, s.Name+":"+s.Type)
	}
	if want := []string{"events:sse", "filesystem:stdio", "github:stdio", "remote:http"}; !slices.Equal(names, want) {
		t.Fatalf("servers = %q, want %q", names, want)
	}
	h.fails(2, []string{"import", "claude.json"}, `"filesystem"`, "already exists")
	h.ok("import", "claude.json", "--replace")
	os.WriteFile(filepath.Join(h.cwd, "bad.json"), []byte(`{"mcpServers": {"x": {"command": 5}}}`), 0o644)
	h.fails(2, []string{"import", "bad.json"}, "bad.json", `"x"`)
	os.WriteFile(filepath.Join(h.cwd, "broken.json"), []byte("{\n\"mcpServers\": {\n"), 0o644)
	h.fails(2, []string{"import", "broken.json"}, "broken.json")
	h.fails(2, []string{"import", "missing.json"}, "missing.json")
}

func TestGlobalUsageErrors(t *testing.T) {
	h := newHarness(t)
	h.fails(2, []string{"frobnicate"}, "frobnicate")
	h.fails(2, []string{"--state-dir"}, "--state-dir")
	file := filepath.Join(h.cwd, "a-file")
	os.WriteFile(file, nil, 0o644)
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"--state-dir", file, "status"}, Env{Stdout: &out, Stderr: &errOut, Cwd: h.cwd}, Extensions{})
	if code != 2 || !strings.Contains(errOut.String(), file) {
		t.Fatalf("state dir that is a file: exit %d, %q", code, errOut.String())
	}
	if r := h.run("--help"); r.code != 0 || !strings.Contains(r.stdout, "roots add PATH") {
		t.Fatalf("--help: %+v", r)
	}
	// Folders on a server's command line stay there, as slots.
	if r := h.run("help"); !strings.Contains(r.stdout, "stay there\nas slots") || strings.Contains(r.stdout, "taken off") {
		t.Errorf("help on a server's folders:\n%s", r.stdout)
	}
	if r := h.run("scan"); r.code != 1 {
		t.Fatalf("scan without a scanner: %+v", r)
	}
	// --state-dir may come after the verb, and "--" protects a server's own flags.
	h.ok("servers", "add", "s", "--", "cmd", "--state-dir", "/elsewhere")
	var servers []app.Server
	json.Unmarshal([]byte(h.ok("servers", "list", "--json")), &servers)
	if len(servers) != 1 || !slices.Equal(servers[0].Args, []string{"--state-dir", "/elsewhere"}) {
		t.Fatalf("servers = %+v", servers)
	}
}

func TestRuntimeFailureExitsOne(t *testing.T) {
	h := newHarness(t)
	os.WriteFile(filepath.Join(h.dir, app.StateFileName), []byte(`{"version": 42}`), 0o600)
	h.fails(1, []string{"pause"}, "version 42")
	h.fails(1, []string{"roots", "list"}, "version 42")
}

func TestCorruptStateWarnsAndContinues(t *testing.T) {
	h := newHarness(t)
	os.WriteFile(filepath.Join(h.dir, app.StateFileName), []byte(`{"version": 1, "roots": [`), 0o600)
	r := h.run("servers", "add", "s", "--", "cmd")
	if r.code != 0 || !strings.Contains(r.stderr, "moved it to") {
		t.Fatalf("%+v", r)
	}
	matches, _ := filepath.Glob(filepath.Join(h.dir, app.StateFileName+".corrupt-*"))
	if len(matches) != 1 {
		t.Fatalf("corrupt copies: %v", matches)
	}
}
