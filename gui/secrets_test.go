package gui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"github.com/google/go-cmp/cmp"

	"rootkeeper/app"
	"rootkeeper/app/secrets/spot"
	"rootkeeper/app/secrets/spot/spottest"
)

// corpusServers are a server per secret shape of the corpus, holding it
// where it belongs: as it is when no keyring took it (in clear) and as
// references (sealed), which the window shows alike.
func corpusServers() []app.Server {
	var out []app.Server
	for i, s := range spottest.Shapes {
		if !s.Secret() {
			continue
		}
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
		out = append(out, srv)
	}
	return out
}

// No card, no Edit form and no Paste preview draws a secret of the corpus;
// an Edit saved as it was, or with another argument added, keeps every
// secret byte for byte.
func TestTheWindowNeverDrawsASecret(t *testing.T) {
	servers := corpusServers()
	f := newFixture(t, Options{}, func(s *app.State) error {
		for _, srv := range servers {
			if err := s.AddServer(srv); err != nil {
				return err
			}
		}
		return nil
	})
	all := map[string]bool{}
	for _, s := range spottest.Shapes {
		for _, secret := range s.Secrets {
			all[secret] = true
		}
	}
	leaks := func(where, text string) {
		t.Helper()
		for secret := range all {
			if strings.Contains(text, secret) {
				t.Errorf("%s draws %q:\n%s", where, secret, text)
			}
		}
	}
	for _, srv := range servers {
		card, _ := cardOf(t, f, srv.Name)
		leaks("the card of "+srv.Name, card)
		if !strings.Contains(card, spot.Redacted) && srv.Type == app.TransportStdio && len(srv.Args) > 0 {
			t.Errorf("the card of %s does not say (secret):\n%s", srv.Name, card)
		}

		form := &serverForm{Server: srv, Editing: true, OnSave: f.u.servers.save(true)}
		form.Show(f.win)
		leaks("Edit "+srv.Name, strings.Join([]string{form.command.Text, form.args.Text, form.env.Text, form.url.Text, form.headers.Text}, "\n"))
		form.dlg.Confirm()
		if got, _ := f.core.Snapshot().State.Server(srv.Name); !cmp.Equal(got.Args, srv.Args) || !cmp.Equal(got.Env, srv.Env) ||
			got.URL != srv.URL || !cmp.Equal(got.Headers, srv.Headers) {
			t.Errorf("Edit and Save changed %s:\n%s", srv.Name, cmp.Diff(srv, got))
		}
	}

	// An argument added in the form: the secrets stay, the person is
	// asked whether it is a new program.
	srv := servers[0]
	for _, s := range servers {
		if len(s.Args) > 0 {
			srv = s
			break
		}
	}
	form := &serverForm{Server: srv, Editing: true, OnSave: f.u.servers.save(true)}
	form.Show(f.win)
	test.Type(form.args, "--verbose\n")
	form.dlg.Confirm()
	if f.u.servers.programChanged != nil {
		f.u.servers.programChanged.Confirm()
	}
	got, _ := f.core.Snapshot().State.Server(srv.Name)
	if !slices.Equal(got.Args[len(got.Args)-len(srv.Args):], srv.Args) {
		t.Errorf("after adding an argument %q, want %q at the end", got.Args, srv.Args)
	}

	// Paste: the preview names no secret.
	var pasted strings.Builder
	pasted.WriteString(`{"mcpServers": {`)
	for i, srv := range servers {
		if i > 0 {
			pasted.WriteString(",")
		}
		fmt.Fprintf(&pasted, "%q: %s", srv.Name, mustJSON(t, srv))
	}
	pasted.WriteString("}}")
	d := &pasteDialog{}
	d.content()
	// Set without laying the long text out (what OnChanged runs is parse).
	d.text.Text = pasted.String()
	d.parse()
	if len(d.found) != len(servers) {
		t.Fatalf("the paste found %d servers of %d: %s", len(d.found), len(servers), d.preview.Text)
	}
	leaks("the Paste preview", d.preview.Text)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
