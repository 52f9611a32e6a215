package cli

import (
	"encoding/json"
	"errors"
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
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rootkeeper-keyring-")
	if err != nil {
		panic(err)
	}
	addr, stop, err := apptest.StartSecretService(dir)
	switch {
	case errors.Is(err, apptest.ErrNoSecretService):
		// macOS, Windows: their keyrings cannot be started privately,
		// and a test must not write to the person's own.
		keyring.MockInit()
		stop = func() {}
	case err != nil:
		panic(err)
	default:
		os.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	}
	code := m.Run()
	stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

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
		"remote Authorization":            "keyring:rootkeeper/remote/header/Authorization",
		"brave BRAVE_API_KEY":             "keyring:rootkeeper/brave/env/BRAVE_API_KEY",
	} {
		if refs[key] != want {
			t.Errorf("%s = %q, want %q", key, refs[key], want)
		}
	}
	if v, err := keyring.Get(secrets.Service, "remote/header/Authorization"); err != nil || v != "Bearer imported-s3cret" {
		t.Fatalf("the keyring holds %q, %v", v, err)
	}
	h.ok("servers", "remove", "remote")
	if _, err := keyring.Get(secrets.Service, "remote/header/Authorization"); err != keyring.ErrNotFound {
		t.Fatalf("after servers remove the keyring still answers: %v", err)
	}
}
