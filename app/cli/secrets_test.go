package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/secrets"
)

// The command line's tests run beside a real Secret Service of their own
// (gnome-keyring-daemon on a private session bus): servers' secrets go
// there, never to the keyring of whoever runs the tests.
func TestMain(m *testing.M) { apptest.SecretServiceMain(m) }

// servers add and import put tokens and Authorization headers in the
// keyring; state.json and `servers list --json` hold references only;
// servers remove takes them out of the keyring.
func TestSecretsGoToTheKeyring(t *testing.T) {
	h := newHarness(t)
	h.ok("servers", "add", "gh", "--env", "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_addedtoken", "--env", "LOG=debug", "--", "gh-mcp")
	cfg := `{"mcpServers": {
  "remote": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer imported-s3cret"}},
  "brave": {"command": "brave-mcp", "env": {"BRAVE_API_KEY": "BSAimported"}}
}}`
	os.WriteFile(filepath.Join(h.cwd, "c.json"), []byte(cfg), 0o644)
	h.ok("import", "c.json")

	state, err := os.ReadFile(filepath.Join(h.dir, app.StateFileName))
	if err != nil {
		t.Fatal(err)
	}
	list := h.ok("servers", "list", "--json")
	for _, secret := range []string{"ghp_addedtoken", "imported-s3cret", "BSAimported"} {
		if strings.Contains(string(state), secret) || strings.Contains(list, secret) {
			t.Fatalf("%q is in state.json or servers list --json:\n%s\n%s", secret, state, list)
		}
	}
	var servers []app.Server
	if err := json.Unmarshal([]byte(list), &servers); err != nil {
		t.Fatal(err)
	}
	refs := map[string]string{}
	for _, s := range servers {
		for k, v := range s.Env {
			refs[s.Name+" "+k] = v
		}
		for k, v := range s.Headers {
			refs[s.Name+" "+k] = v
		}
	}
	for key, want := range map[string]string{
		"gh GITHUB_PERSONAL_ACCESS_TOKEN": "keyring:rootkeeper/gh/env/GITHUB_PERSONAL_ACCESS_TOKEN",
		"gh LOG":                          "debug",
		"remote Authorization":            "Bearer keyring:rootkeeper/remote/header/Authorization/0",
		"brave BRAVE_API_KEY":             "keyring:rootkeeper/brave/env/BRAVE_API_KEY",
	} {
		if refs[key] != want {
			t.Errorf("%s = %q, want %q", key, refs[key], want)
		}
	}
	if v, err := keyring.Get(secrets.Service, "remote/header/Authorization/0"); err != nil || v != "imported-s3cret" {
		t.Fatalf("the keyring holds %q, %v", v, err)
	}
	h.ok("servers", "remove", "remote")
	if _, err := keyring.Get(secrets.Service, "remote/header/Authorization/0"); err != keyring.ErrNotFound {
		t.Fatalf("after servers remove the keyring still answers: %v", err)
	}
}

// Secrets on a command line (the value after --api-key, --token=…) and in
// a URL's query (api_key=…) go to the keyring too: state.json, servers
// list and servers list --json hold references, servers add warns that the
// server still gets its argument on its command line, the server is
// started with the real values, and servers remove forgets them.
func TestSecretArgumentsAndURLsGoToTheKeyring(t *testing.T) {
	h := newHarness(t)
	const key, tok, urlKey = "sk-proj-Abc123Def456Ghi789Jkl0", "ghp_0123456789abcdefABCDEF", "sk-live-Zz9Yy8Xx7Ww6Vv5Uu4"
	r := h.run("servers", "add", "x", "--", "mcp-x", "--api-key", key, "--port", "8080", "--token="+tok, "plain")
	if r.code != 0 {
		t.Fatalf("servers add: %d %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "/proc/PID/cmdline") {
		t.Errorf("servers add did not warn that the argument stays on a command line:\n%s", r.stderr)
	}
	h.ok("servers", "add", "w", "--url", "https://api.example.com/mcp?api_key="+urlKey+"&region=eu")
	state, err := os.ReadFile(filepath.Join(h.dir, app.StateFileName))
	if err != nil {
		t.Fatal(err)
	}
	list, listJSON := h.ok("servers", "list"), h.ok("servers", "list", "--json")
	for _, secret := range []string{key, tok, urlKey} {
		for what, text := range map[string]string{"state.json": string(state), "servers list": list, "servers list --json": listJSON, "stderr": r.stderr + r.stdout} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds %q:\n%s", what, secret, text)
			}
		}
	}
	st, err := app.OpenStore(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Load()
	if err != nil {
		t.Fatal(err)
	}
	x, _ := s.Server("x")
	w, _ := s.Server("w")
	wantArgs := []string{"--api-key", "keyring:rootkeeper/x/arg/0", "--port", "8080", "--token=keyring:rootkeeper/x/arg/1", "plain"}
	if strings.Join(x.Args, " ") != strings.Join(wantArgs, " ") {
		t.Errorf("stored args %q, want %q", x.Args, wantArgs)
	}
	if w.URL != "https://api.example.com/mcp?api_key=keyring:rootkeeper/w/url/0&region=eu" {
		t.Errorf("stored URL %q", w.URL)
	}
	rx, _, err := secrets.ResolveHiding(x)
	if err != nil || strings.Join(rx.Args, " ") != "--api-key "+key+" --port 8080 --token="+tok+" plain" {
		t.Errorf("resolved args %q, %v", rx.Args, err)
	}
	rw, _, err := secrets.ResolveHiding(w)
	if err != nil || rw.URL != "https://api.example.com/mcp?api_key="+urlKey+"&region=eu" {
		t.Errorf("resolved URL %q, %v", rw.URL, err)
	}
	h.ok("servers", "remove", "x")
	if _, err := keyring.Get(secrets.Service, "x/arg/0"); err != keyring.ErrNotFound {
		t.Errorf("after servers remove the keyring still holds x/arg/0: %v", err)
	}
}

// A configuration imported again with its key in clear is the program that
// is stored with the key's reference: it keeps its decisions. Another
// argument makes it another program.
func TestReimportWithASecretArgumentKeepsDecisions(t *testing.T) {
	h := newHarness(t)
	dir := h.folder("proj")
	write := func(extra string) {
		cfg := `{"mcpServers": {"x": {"command": "mcp-x", "args": ["--api-key", "sk-proj-Abc123Def456Ghi789Jkl0"` + extra + `], "env": {"LOG": "1"}}}}`
		os.WriteFile(filepath.Join(h.cwd, "c.json"), []byte(cfg), 0o644)
	}
	write("")
	h.ok("import", "c.json")
	h.ok("roots", "add", dir, "--enable")
	h.ok("grant", "x", dir)
	write("")
	if out := h.ok("import", "c.json", "--replace"); !strings.Contains(out, "run the same program and keep their decisions") {
		t.Errorf("re-import of the same configuration:\n%s", out)
	}
	if got := h.status().server("x").Visible; len(got) != 1 {
		t.Errorf("after the re-import x sees %v", got)
	}
	write(`, "--other"`)
	if out := h.ok("import", "c.json", "--replace"); !strings.Contains(out, "now runs something else") {
		t.Errorf("an import with another argument:\n%s", out)
	}
}
