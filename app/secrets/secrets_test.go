package secrets

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zalando/go-keyring"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/secrets/spot"
	"rootkeeper/app/secrets/spot/spottest"
)

// Every test here talks to a real Secret Service (gnome-keyring-daemon on a
// private session bus): go-keyring's D-Bus connection is one per process,
// so the service is one per test binary too.
func TestMain(m *testing.M) { apptest.SecretServiceMain(m) }

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
		{"Authorization": "Bearer keyring:rootkeeper/remote/header/Authorization/0", "Accept": "x"},
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
	if v, err := keyring.Get(Service, "remote/header/Authorization/0"); err != nil || v != "s3cret" {
		t.Fatalf("keyring holds %q, %v", v, err)
	}
	for i, wantEnv := range []map[string]string{shared, {"Authorization": "Bearer s3cret", "Accept": "x"}} {
		srv, _, err := ResolveHiding(st.Servers[i])
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
	if st.Servers[0].Env["GITHUB_TOKEN"] != spot.RefText(spot.WholeUser("github", KindEnv, "GITHUB_TOKEN"), false) {
		t.Fatal("ResolveHiding changed the state's map")
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
	if _, _, err := ResolveHiding(st.Servers[0]); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "github") {
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

// corpusState is one server per shape of the corpus, in the place the
// shape puts it: a stdio server's arguments or env, a remote server's
// headers or URL.
func corpusState() app.State {
	var st app.State
	for i, s := range spottest.Shapes {
		srv := app.Server{Name: fmt.Sprintf("c%d", i), Type: app.TransportStdio, Command: "srv"}
		switch s.Kind {
		case spottest.Args:
			srv.Args = slices.Clone(s.Args)
		case spottest.Env:
			srv.Env = map[string]string{s.Name: s.Value, "LOG_LEVEL": "debug"}
		case spottest.Header:
			srv.Type, srv.Command, srv.URL = app.TransportHTTP, "", "https://mcp.example.com/mcp"
			srv.Headers = map[string]string{s.Name: s.Value, "Accept": "application/json"}
		case spottest.URL:
			srv.Type, srv.Command, srv.URL = app.TransportHTTP, "", s.Value
		}
		st.Servers = append(st.Servers, srv)
	}
	return st
}

// shownField is the field of srv that the corpus shape s is in, as it is
// shown.
func shownField(s spottest.Shape, srv app.Server) string {
	switch s.Kind {
	case spottest.Args:
		return strings.Join(spot.ShowArgs(srv.Name, srv.Args), " ")
	case spottest.Env:
		return spot.ShowEnv(srv.Name, srv.Env)[s.Name]
	case spottest.Header:
		return spot.ShowHeaders(srv.Name, srv.Headers)[s.Name]
	}
	return spot.ShowURL(srv.Name, srv.URL)
}

// Every secret of the corpus goes to the real keyring and only its
// reference stays; the rest of the value reads as it did; the server gets
// every value back byte for byte; look-alikes are not touched; Forget
// takes them all out of the keyring.
func TestCorpusThroughTheKeyring(t *testing.T) {
	var warnings []string
	s := &Sealer{Warn: func(m string) { warnings = append(warnings, m) }}
	orig := corpusState()
	st := corpusState()
	s.Seal(&st)
	data, _ := app.EncodeState(st)
	redacted, _ := json.Marshal(func() (out []app.Server) {
		for _, srv := range st.Servers {
			out = append(out, Redact(srv))
		}
		return out
	}())
	sealedSecrets := 0
	for i, shape := range spottest.Shapes {
		for _, secret := range shape.Secrets {
			if strings.Contains(string(data), secret) || strings.Contains(string(redacted), secret) {
				t.Errorf("%s (%s): %q is in state.json or servers list --json", shape.From, shape.Shape, secret)
			}
			sealedSecrets++
		}
		if !shape.Secret() {
			if diff := cmp.Diff(orig.Servers[i], st.Servers[i]); diff != "" {
				t.Errorf("%s (%s), a look-alike, changed:\n%s", shape.From, shape.Shape, diff)
			}
		}
		if got := shownField(shape, st.Servers[i]); got != shape.WantShown() {
			t.Errorf("%s (%s) sealed, shown:\n%q\nwant %q", shape.From, shape.Shape, got, shape.WantShown())
		}
		res, _, err := ResolveHiding(st.Servers[i])
		if err != nil {
			t.Fatalf("%s: %v", shape.From, err)
		}
		if diff := cmp.Diff(orig.Servers[i], res); diff != "" {
			t.Errorf("%s (%s): the server does not get its configuration back byte for byte:\n%s", shape.From, shape.Shape, diff)
		}
	}
	for _, w := range warnings {
		if !strings.Contains(w, "/proc/PID/cmdline") {
			t.Fatalf("a warning with a keyring: %q", w)
		}
	}
	before, _ := json.Marshal(st)
	s.Seal(&st)
	if after, _ := json.Marshal(st); string(after) != string(before) {
		t.Fatal("sealing again changed the state")
	}
	users := 0
	for _, srv := range st.Servers {
		sealed, clear := Where(srv)
		if len(clear) > 0 {
			t.Errorf("%s: still in state.json: %q", srv.Name, clear)
		}
		for _, v := range append(append(slices.Clone(srv.Args), srv.URL), slices.Collect(maps.Values(srv.Env))...) {
			users += len(spot.FindRefs(srv.Name, v))
		}
		for _, v := range srv.Headers {
			users += len(spot.FindRefs(srv.Name, v))
		}
		_ = sealed
		if err := Forget(nil, srv); err != nil {
			t.Fatal(err)
		}
		if len(sealed) > 0 {
			if _, _, err := ResolveHiding(srv); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s after Forget: %v", srv.Name, err)
			}
		}
	}
	if users != sealedSecrets {
		t.Errorf("%d references for %d secrets", users, sealedSecrets)
	}
	t.Logf("%d secrets of %d shapes went through the keyring", sealedSecrets, len(spottest.Shapes))
}

// Without a keyring the corpus stays in the state file byte for byte, the
// person is told once per secret and never shown one, in the warnings
// either.
func TestCorpusWithoutAKeyring(t *testing.T) {
	var warnings []string
	s := &Sealer{Keyring: &brokenKeyring{}, Warn: func(m string) { warnings = append(warnings, m) }}
	st := corpusState()
	s.Seal(&st)
	s.Seal(&st)
	if diff := cmp.Diff(corpusState(), st); diff != "" {
		t.Fatalf("values changed without a keyring:\n%s", diff)
	}
	n := 0
	for i, shape := range spottest.Shapes {
		n += len(shape.Secrets)
		red, _ := json.Marshal(Redact(st.Servers[i]))
		for _, secret := range shape.Secrets {
			if strings.Contains(string(red), secret) || strings.Contains(shownField(shape, st.Servers[i]), secret) ||
				strings.Contains(strings.Join(warnings, "\n"), secret) {
				t.Errorf("%s (%s): %q is shown", shape.From, shape.Shape, secret)
			}
		}
		if got := shownField(shape, st.Servers[i]); got != shape.WantShown() {
			t.Errorf("%s (%s) in clear, shown %q, want %q", shape.From, shape.Shape, got, shape.WantShown())
		}
		if _, clear := Where(st.Servers[i]); len(clear) == 0 && shape.Secret() {
			t.Errorf("%s (%s): Where does not say it is in state.json", shape.From, shape.Shape)
		}
	}
	// One warning per secret, and one per argument that holds one.
	argWarnings := 0
	for _, w := range warnings {
		if strings.Contains(w, "/proc/PID/cmdline") {
			argWarnings++
		}
	}
	if len(warnings)-argWarnings != n || argWarnings != 0 {
		t.Errorf("%d warnings (%d about command lines) for %d secrets:\n%s", len(warnings), argWarnings, n, strings.Join(warnings, "\n"))
	}
}
