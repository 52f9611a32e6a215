package app_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"rootkeeper/app"
	"rootkeeper/app/secrets/spot"
	"rootkeeper/app/secrets/spot/spottest"
)

// corpusServer is a server holding corpus shape s where it belongs.
func corpusServer(i int, s spottest.Shape) app.Server {
	srv := app.Server{Name: fmt.Sprintf("c%d", i), Type: app.TransportStdio, Command: "srv"}
	switch s.Kind {
	case spottest.Args:
		srv.Args = slices.Clone(s.Args)
	case spottest.Env:
		srv.Env = map[string]string{s.Name: s.Value}
	case spottest.Header:
		srv.Type, srv.Command, srv.URL = app.TransportHTTP, "", "https://mcp.example.com/mcp"
		srv.Headers = map[string]string{s.Name: s.Value}
	case spottest.URL:
		srv.Type, srv.Command, srv.URL = app.TransportHTTP, "", s.Value
	}
	return srv
}

// An editor never shows a secret of the corpus, and saving what it showed,
// also edited around the "(secret)", gives every secret back byte for
// byte; Program never shows one either.
func TestEditingHidesAndPutsBackTheCorpus(t *testing.T) {
	for i, s := range spottest.Shapes {
		srv := corpusServer(i, s)
		shown, hidden := app.ForEditing(srv)
		data, _ := json.Marshal(shown)
		for _, secret := range s.Secrets {
			if strings.Contains(string(data), secret) || strings.Contains(app.Program(srv), secret) {
				t.Errorf("%s (%s): %q is shown:\n%s\n%s", s.From, s.Shape, secret, data, app.Program(srv))
			}
		}
		back, err := hidden.PutBack(shown)
		if err != nil {
			t.Fatalf("%s (%s): %v", s.From, s.Shape, err)
		}
		if diff := cmp.Diff(srv, back); diff != "" {
			t.Errorf("%s (%s): not put back byte for byte:\n%s", s.From, s.Shape, diff)
		}
		// The person adds an argument before the others and changes the
		// URL's path: the secrets stay where they were.
		edited := shown
		if len(edited.Args) > 0 {
			edited.Args = append([]string{"--verbose"}, edited.Args...)
		}
		back, err = hidden.PutBack(edited)
		if err != nil {
			t.Fatalf("%s (%s) edited: %v", s.From, s.Shape, err)
		}
		if len(srv.Args) > 0 && !slices.Equal(back.Args[1:], srv.Args) {
			t.Errorf("%s (%s): an inserted argument moved the secrets: %q", s.From, s.Shape, back.Args)
		}
	}
}

// References are shown as "(secret)" and put back as they were; a
// "(secret)" typed where nothing was hidden is refused, naming where.
func TestEditingReferences(t *testing.T) {
	srv := app.Server{Name: "db", Type: app.TransportStdio, Command: "pg-mcp",
		Args: []string{"--password", "keyring:rootkeeper/db/arg/0", "postgres://u:" + spot.RefText("db/arg/1", true) + "@h/db"},
		Env:  map[string]string{"API_TOKEN": "keyring:rootkeeper/db/env/API_TOKEN", "AUTH": "Bearer keyring:rootkeeper/db/env/AUTH/0"}}
	shown, hidden := app.ForEditing(srv)
	want := []string{"--password", "(secret)", "postgres://u:(secret)@h/db"}
	if !slices.Equal(shown.Args, want) || shown.Env["API_TOKEN"] != "(secret)" || shown.Env["AUTH"] != "Bearer (secret)" {
		t.Fatalf("shown %q %q", shown.Args, shown.Env)
	}
	shown.Args = []string{"postgres://u:(secret)@other/db", "--password", "(secret)"}
	back, err := hidden.PutBack(shown)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"postgres://u:(secret)@other/db", "--password", "keyring:rootkeeper/db/arg/0"}; back.Args[1] != want[1] || back.Args[2] != want[2] {
		t.Fatalf("put back %q", back.Args)
	}
	for _, bad := range []func(*app.Server){
		func(s *app.Server) { s.Env = map[string]string{"NEW": "(secret)"} },
		func(s *app.Server) { s.Args = append(s.Args, "--token", "(secret)") },
		func(s *app.Server) { s.Env = map[string]string{"AUTH": "(secret) (secret)"} },
	} {
		edited, _ := app.ForEditing(srv)
		bad(&edited)
		if _, err := hidden.PutBack(edited); err == nil || !strings.Contains(err.Error(), "type the value itself") {
			t.Errorf("a made-up (secret) was taken: %v", err)
		}
	}
}
