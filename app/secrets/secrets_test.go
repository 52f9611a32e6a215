package secrets

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zalando/go-keyring"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// Every test here talks to a real Secret Service (gnome-keyring-daemon on a
// private session bus): go-keyring's D-Bus connection is one per process,
// so the service is one per test binary too.
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

func TestLooksSecret(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        bool
	}{
		{"GITHUB_PERSONAL_ACCESS_TOKEN", "x", true},
		{"BRAVE_API_KEY", "abc", true},
		{"OPENAI_APIKEY", "abc", true},
		{"DB_PASSWORD", "pw", true},
		{"Authorization", "Bearer t", true},
		{"X-Api-Key", "k", true},
		{"Cookie", "s=1", true},
		{"AWS_SECRET_ACCESS_KEY", "k", true},
		{"SOME_VAR", "ghp_0123456789abcdef", true},
		{"URL", "sk-ant-api03-xyz", true},
		{"PATH", "/usr/bin", false},
		{"HOME", "/home/me", false},
		{"KEYBOARD_LAYOUT", "us", false},
		{"MONKEY", "banana", false},
		{"DEBUG", "1", false},
		{"GITHUB_TOKEN", "", false},
		{"GITHUB_TOKEN", "${GITHUB_TOKEN}", false},
		{"Authorization", "Bearer ${TOKEN}", false},
		{"GITHUB_TOKEN", Ref("gh", KindEnv, "GITHUB_TOKEN"), false},
	} {
		if got := LooksSecret(tc.name, tc.value); got != tc.want {
			t.Errorf("LooksSecret(%q, %q) = %v, want %v", tc.name, tc.value, got, tc.want)
		}
	}
}

// Sealing moves secrets into the real keyring and leaves references in the
// state; resolving gives the server its values back; the JSON of the state
// holds no secret; Forget takes them out of the keyring.
func TestSealResolveForgetAgainstSecretService(t *testing.T) {
	var warnings []string
	s := &Sealer{Warn: func(m string) { warnings = append(warnings, m) }}
	shared := map[string]string{"GITHUB_TOKEN": "ghp_realtoken123", "DEBUG": "1"}
	st := app.State{Servers: []app.Server{
		{Name: "github", Type: app.TransportStdio, Command: "gh-mcp", Env: shared},
		{Name: "remote", Type: app.TransportHTTP, URL: "https://mcp.example.com", Headers: map[string]string{"Authorization": "Bearer s3cret", "Accept": "x"}},
		{Name: "plain", Type: app.TransportStdio, Command: "x", Env: map[string]string{"LANG": "C"}},
	}}
	s.Seal(&st)
	if len(warnings) > 0 {
		t.Fatalf("warnings with a keyring: %q", warnings)
	}
	want := []map[string]string{
		{"GITHUB_TOKEN": "keyring:rootkeeper/github/env/GITHUB_TOKEN", "DEBUG": "1"},
		{"Authorization": "keyring:rootkeeper/remote/header/Authorization", "Accept": "x"},
		{"LANG": "C"},
	}
	got := []map[string]string{st.Servers[0].Env, st.Servers[1].Headers, st.Servers[2].Env}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("sealed (-want +got):\n%s", diff)
	}
	if shared["GITHUB_TOKEN"] != "ghp_realtoken123" {
		t.Fatal("Seal changed a map it does not own")
	}
	data, _ := app.EncodeState(st)
	for _, secret := range []string{"ghp_realtoken123", "s3cret"} {
		if strings.Contains(string(data), secret) {
			t.Fatalf("the state file would hold %q:\n%s", secret, data)
		}
	}
	// The secret is in the keyring itself, not only in this process.
	if v, err := keyring.Get(Service, "remote/header/Authorization"); err != nil || v != "Bearer s3cret" {
		t.Fatalf("keyring holds %q, %v", v, err)
	}
	for i, wantEnv := range []map[string]string{shared, {"Authorization": "Bearer s3cret", "Accept": "x"}} {
		srv, err := ResolveServer(st.Servers[i])
		if err != nil {
			t.Fatal(err)
		}
		gotMap := srv.Env
		if i == 1 {
			gotMap = srv.Headers
		}
		if diff := cmp.Diff(wantEnv, gotMap); diff != "" {
			t.Errorf("resolved %s (-want +got):\n%s", srv.Name, diff)
		}
	}
	if st.Servers[0].Env["GITHUB_TOKEN"] != Ref("github", KindEnv, "GITHUB_TOKEN") {
		t.Fatal("ResolveServer changed the state's map")
	}
	// Sealing again is a no-op: references are not secrets.
	before, _ := json.Marshal(st)
	s.Seal(&st)
	if after, _ := json.Marshal(st); string(after) != string(before) {
		t.Fatalf("second seal changed the state:\n%s\n%s", before, after)
	}
	if err := Forget(nil, st.Servers[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveServer(st.Servers[0]); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "github") {
		t.Fatalf("resolving a forgotten secret: %v", err)
	}
	if err := Available(OS); err != nil {
		t.Fatalf("Available: %v", err)
	}
}

// brokenKeyring is a keyring that is not there, as on a machine without a
// Secret Service.
type brokenKeyring struct{ calls int }

func (b *brokenKeyring) Set(string, string, string) error {
	b.calls++
	return errors.New("The name org.freedesktop.secrets was not provided by any .service files")
}
func (b *brokenKeyring) Get(string, string) (string, error) { return "", b.Set("", "", "") }
func (b *brokenKeyring) Delete(string, string) error        { return b.Set("", "", "") }

// Without a keyring the secret stays in the state, the person is told once,
// and the keyring is not asked again on every save.
func TestSealWithoutKeyringKeepsTheValueAndSaysSo(t *testing.T) {
	k := &brokenKeyring{}
	var warnings []string
	s := &Sealer{Keyring: k, Warn: func(m string) { warnings = append(warnings, m) }}
	st := app.State{Servers: []app.Server{{Name: "gh", Env: map[string]string{"GITHUB_TOKEN": "t1", "OTHER_TOKEN": "t2"}}}}
	s.Seal(&st)
	s.Seal(&st)
	if st.Servers[0].Env["GITHUB_TOKEN"] != "t1" || st.Servers[0].Env["OTHER_TOKEN"] != "t2" {
		t.Fatalf("values lost: %v", st.Servers[0].Env)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "GITHUB_TOKEN") || !strings.Contains(warnings[0], "0600") {
		t.Fatalf("warnings %q", warnings)
	}
	if k.calls != 1 {
		t.Fatalf("a keyring that failed was asked %d times", k.calls)
	}
	if err := Available(k); err == nil {
		t.Fatal("Available says a missing keyring is there")
	}
	red := Redact(st.Servers[0])
	if red.Env["GITHUB_TOKEN"] != Redacted || st.Servers[0].Env["GITHUB_TOKEN"] != "t1" {
		t.Fatalf("Redact: %v (original %v)", red.Env, st.Servers[0].Env)
	}
}
