package app_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
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

// Every field of app.Server is either walked by EachSecretField — and so
// sealed into the keyring, resolved, redacted, hidden from an editor and
// named by doctor — or named here as one that holds no secret. A field
// added to Server fails this test until it is put in one or the other.
func TestEachSecretFieldVisitsEveryField(t *testing.T) {
	noSecret := map[string]string{
		"Name":            "the server's name, shown everywhere",
		"Type":            "stdio, http or sse",
		"Command":         "a program's path or name; its arguments hold the secrets",
		"Cwd":             "a folder",
		"Confine":         "a setting",
		"ConfineRequired": "a setting",
		"RootsMode":       "a setting",
		"Sampling":        "a setting",
		"HostRoots":       "a setting",
		"KeepArgs":        "values kept because they look like paths (FindSlots)",
		"Slots":           "folders and files the configuration names",
		"Lost":            "folders",
		"FoldersTakenOff": "a mark",
		"DataProgram":     "a hash of the program (ProgramID), never its arguments",
		"KeptData":        "data folders kept aside",
		"Network":         "a setting: destinations (names, addresses, sockets)",
	}
	typ := reflect.TypeFor[app.Server]()
	for name := range noSecret {
		if _, ok := typ.FieldByName(name); !ok {
			t.Errorf("Server has no field %s: take it off this list", name)
		}
	}
	strs := reflect.TypeFor[[]string]()
	strMap := reflect.TypeFor[map[string]string]()
	for i := range typ.NumField() {
		field := typ.Field(i)
		if _, ok := noSecret[field.Name]; ok {
			continue
		}
		var srv app.Server
		v := reflect.ValueOf(&srv).Elem().Field(i)
		secret := "sk-proj-" + field.Name + "0123456789abcdefghij"
		switch v.Type() {
		case reflect.TypeFor[string]():
			v.SetString(secret)
		case strs:
			v.Set(reflect.ValueOf([]string{"--verbose", secret}))
		case strMap:
			v.Set(reflect.ValueOf(map[string]string{"SOME_NAME": secret}))
		default:
			t.Errorf("Server.%s (%s): walk it in EachSecretField or name it here as holding no secret", field.Name, v.Type())
			continue
		}
		before := fmt.Sprint(v.Interface())
		visited := false
		app.EachSecretField(&srv, func(f app.SecretField) string {
			if f.Value != secret {
				return f.Value
			}
			visited = true
			return "replaced"
		})
		switch after := fmt.Sprint(v.Interface()); {
		case !visited:
			t.Errorf("EachSecretField does not visit Server.%s: a secret there would be stored, logged and shown in clear", field.Name)
		case after == before || strings.Contains(after, secret):
			t.Errorf("Server.%s: what the visit returned was not stored (%s)", field.Name, after)
		}
	}
}

// The walk goes through arguments, env and headers in name order, and the
// URL; it changes a copy of what it changes, never the slice or map a
// snapshot may share.
func TestEachSecretFieldOrderAndCopies(t *testing.T) {
	srv := app.Server{
		Name:    "s",
		Args:    []string{"--api-key", "sk-proj-0123456789abcdefghij", "plain"},
		Env:     map[string]string{"B_TOKEN": "tok-0123456789abcdefghij", "A": "x"},
		Headers: map[string]string{"Authorization": "Bearer abcdefghij0123456789"},
		URL:     "https://u:pw-0123456789@example.com/mcp",
	}
	orig := srv
	origArgs, origEnv, origHeaders := slices.Clone(srv.Args), maps.Clone(srv.Env), maps.Clone(srv.Headers)
	var where []string
	app.EachSecretField(&srv, func(f app.SecretField) string {
		where = append(where, f.Where())
		return spot.Replace(f.Value, f.Found, "X")
	})
	want := []string{"argument 1", "argument 2", "argument 3", "env A", "env B_TOKEN", "header Authorization", "URL"}
	if d := cmp.Diff(want, where); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	if !slices.Equal(orig.Args, origArgs) || !maps.Equal(orig.Env, origEnv) || !maps.Equal(orig.Headers, origHeaders) {
		t.Errorf("the walk changed what the server shared: %q %q %q", orig.Args, orig.Env, orig.Headers)
	}
	if srv.Args[1] != "X" || srv.Env["B_TOKEN"] != "X" || srv.Headers["Authorization"] != "Bearer X" || srv.Env["A"] != "x" || srv.Args[2] != "plain" {
		t.Errorf("walked: %q %q %q", srv.Args, srv.Env, srv.Headers)
	}
}
