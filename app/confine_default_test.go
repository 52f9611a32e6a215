package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPutServerConfinesByDefault: a stdio server put any way is confined
// unless the definition says otherwise; a replaced stdio server keeps its
// setting; a remote server is never confined; a server that was remote and
// becomes stdio is confined.
func TestPutServerConfinesByDefault(t *testing.T) {
	var s State
	put := func(srv Server, o PutOptions) Server {
		t.Helper()
		res, err := s.PutServer(srv, o)
		if err != nil {
			t.Fatal(err)
		}
		return res.Server
	}
	stdio := func(name string) Server { return Server{Name: name, Type: TransportStdio, Command: "srv"} }
	if got := put(stdio("a"), PutOptions{}); !got.Confine || got.ConfineRequired {
		t.Errorf("a new stdio server: Confine %v, ConfineRequired %v; want confined by default", got.Confine, got.ConfineRequired)
	}
	if got := put(stdio("b"), PutOptions{Given: SetConfine}); got.Confine {
		t.Errorf("a server given unconfined (--no-confine) was confined")
	}
	// An import or a protect of b again (nothing given) keeps the person's no.
	if got := put(stdio("b"), PutOptions{Replace: true}); got.Confine {
		t.Errorf("a replace that says nothing confined a server the person left unconfined")
	}
	web := Server{Name: "web", Type: TransportHTTP, URL: "https://example.com/mcp", Confine: true}
	if got := put(web, PutOptions{Given: SetConfine}); got.Confine || got.ConfineRequired {
		t.Errorf("a remote server was confined")
	}
	if got := put(stdio("web"), PutOptions{Replace: true}); !got.Confine {
		t.Errorf("a remote server that now runs a command was not confined")
	}
	strict := stdio("c")
	strict.Confine, strict.ConfineRequired = true, true
	put(strict, PutOptions{Given: SetConfine})
	if got := put(stdio("c"), PutOptions{Replace: true}); !got.Confine || !got.ConfineRequired {
		t.Errorf("a replace lost --confine: %+v", got)
	}
}

// TestMigrationKeepsConfinementAndOffersOnce: a state of version 2 keeps
// each server's setting; the confined ones were asked for in so many
// words, the unconfined stdio ones are offered once (remote ones never),
// and the answer is remembered either way.
func TestMigrationKeepsConfinementAndOffersOnce(t *testing.T) {
	dir := t.TempDir()
	s, _ := OpenStore(dir)
	v2 := `{"version": 2, "roots": [], "decisions": [], "paused": false, "servers": [
		{"name": "boxed", "type": "stdio", "command": "a", "confine": true},
		{"name": "open", "type": "stdio", "command": "b"},
		{"name": "git", "type": "stdio", "command": "c"},
		{"name": "web", "type": "http", "url": "https://example.com/mcp"}]}`
	if err := os.WriteFile(s.Path(), []byte(v2), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Server{}
	for _, srv := range st.Servers {
		byName[srv.Name] = srv
	}
	if b := byName["boxed"]; !b.Confine || !b.ConfineRequired {
		t.Errorf("boxed: %+v; want confined, as asked for", b)
	}
	if byName["open"].Confine || byName["git"].Confine || byName["web"].Confine {
		t.Errorf("a server's setting changed in the migration: %+v", st.Servers)
	}
	if got := st.ConfineOffered(); !slices.Equal(got, []string{"open", "git"}) {
		t.Fatalf("offered %q, want open and git", got)
	}
	// The person confines git alone by its switch: the offer then names
	// open only; answering it confines open and ends the offer.
	if err := st.SetConfinement("git", true); err != nil {
		t.Fatal(err)
	}
	if got := st.ConfineOffered(); !slices.Equal(got, []string{"open"}) {
		t.Fatalf("offered %q after git was confined", got)
	}
	st.AnswerConfineOffer(true)
	if got, _ := st.Server("open"); !got.Confine || got.ConfineRequired {
		t.Errorf("open after the offer was taken: %+v", got)
	}
	if len(st.ConfineOffered()) != 0 || st.ConfineOffer != nil {
		t.Errorf("the offer is made again: %q", st.ConfineOffer)
	}
	saved, err := s.Update(func(x *State) error { *x = st; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if saved.Version != StateVersion {
		t.Errorf("saved as version %d", saved.Version)
	}
	// Declined: nothing changes, and nothing is offered again.
	var other State
	other.Servers = []Server{{Name: "x", Type: TransportStdio, Command: "x"}}
	other.ConfineOffer = []string{"x"}
	other.AnswerConfineOffer(false)
	if other.Servers[0].Confine || len(other.ConfineOffered()) != 0 {
		t.Errorf("declining changed the server or kept the offer: %+v", other)
	}
}

// TestDiagnoseConfineFailure: what a confined server that stopped reached
// for is read from its error output (node's, a C program's, Python's) and
// the attempts refused; a failure of its own (nothing refused, nothing
// said) is not blamed on the confinement.
func TestDiagnoseConfineFailure(t *testing.T) {
	at := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	home := "/home/me"
	refused := []RefusedAttempt{{Path: "/home/me/.claude-server-commander", Op: OpMkdir}}
	for _, tc := range []struct {
		name    string
		refused []RefusedAttempt
		stderr  string
		ok      bool
		tried   string
		folder  string
		text    string
	}{
		{"node", refused, "Error: EACCES: permission denied, mkdir '/home/me/.claude-server-commander'\n    at Module.mkdirSync\n", true,
			"/home/me/.claude-server-commander", "/home/me/.claude-server-commander",
			"dc wants to keep its own settings in ~/.claude-server-commander, and stopped while confined — allow ~/.claude-server-commander for dc, or run it unconfined"},
		{"c", nil, "[x]:ERROR: open /home/me/data/cfg.ini: Permission denied (13)\n", true, "/home/me/data/cfg.ini", "/home/me/data",
			"dc stopped while confined: it tried to reach ~/data/cfg.ini — allow ~/data for dc, or run it unconfined"},
		{"a log right in home", nil, "Error: EACCES: permission denied, open '/home/me/srv.log'\n", true, "/home/me/srv.log", "", ""},
		// Another program's settings are offered too: allowed, they are
		// this server's alone (State.AllowAsked), no root for everyone.
		{"another program's settings", nil, "open /home/me/.config/gh/hosts.yml: Permission denied\n", true, "/home/me/.config/gh/hosts.yml", "/home/me/.config/gh", ""},
		{"kubernetes", nil, "open /home/me/.kube/config: permission denied\n", true, "/home/me/.kube/config", "/home/me/.kube",
			"dc stopped while confined: it tried to reach ~/.kube/config — allow ~/.kube for dc, or run it unconfined"},
		{"xdg own", []RefusedAttempt{{Path: "/home/me/.config/srv/c.json", Op: "create"}}, "EACCES: permission denied, open '/home/me/.config/srv/c.json'\n", true,
			"/home/me/.config/srv/c.json", "/home/me/.config/srv", ""},
		{"python", nil, "PermissionError: [Errno 13] Permission denied: '/srv/x/state.db'\n", true, "/srv/x/state.db", "/srv/x", ""},
		{"socket", nil, "FATAL:process_singleton_posix.cc(297)] Check failed: . socket() failed: Permission denied (13)\n", true, UnixSocket, "",
			"dc stopped while confined: it tried to open a unix socket — run it unconfined to use it"},
		{"only attempts", refused, "something went wrong\n", true, "/home/me/.claude-server-commander", "/home/me/.claude-server-commander", ""},
		{"its own failure", nil, "Error: invalid API key\n", false, "", "", ""},
		{"a system file", nil, "open /etc/shadow: Permission denied\n", true, "/etc/shadow", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := DiagnoseConfineFailure("dc", tc.refused, tc.stderr, at, home)
			if ok != tc.ok || f.Tried != tc.tried || f.Folder != tc.folder {
				t.Fatalf("got %+v, %v; want tried %q, folder %q, %v", f, ok, tc.tried, tc.folder, tc.ok)
			}
			if tc.text != "" && f.Text(home) != tc.text {
				t.Errorf("text %q\nwant %q", f.Text(home), tc.text)
			}
		})
	}
}

// TestConfineFailureIsKeptPerServerAndGoesWithTheAnswer: one failure per
// server, only for a confined one; running it unconfined (a decision)
// forgets it, and so does confining it again.
func TestConfineFailureIsKeptPerServerAndGoesWithTheAnswer(t *testing.T) {
	s := State{Servers: []Server{{Name: "dc", Type: TransportStdio, Command: "x", Confine: true}, {Name: "open", Type: TransportStdio, Command: "y"}}}
	s.RecordConfineFailure(ConfineFailure{Server: "dc", Tried: "/a"})
	s.RecordConfineFailure(ConfineFailure{Server: "dc", Tried: "/b", Detail: strings.Repeat("x", 1000)})
	s.RecordConfineFailure(ConfineFailure{Server: "open", Tried: "/c"})
	if f, ok := s.ConfineFailureOf("dc"); !ok || f.Tried != "/b" || len(f.Detail) > 310 || len(s.ConfineFailures) != 1 {
		t.Fatalf("failures %+v", s.ConfineFailures)
	}
	if err := s.SetConfinement("dc", false); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.ConfineFailureOf("dc"); ok {
		t.Errorf("the failure outlived the answer")
	}
	if srv, _ := s.Server("dc"); srv.Confine {
		t.Errorf("dc still confined")
	}
	if err := s.SetConfinement("nope", false); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown server: %v", err)
	}
}

// TestServerOwnState: a known server's variables point into its data
// folder unless its configuration sets them, its own home paths are given,
// an unknown server gets its data folder alone, and the data folder is
// made 0700 and removed with RemoveServerFiles.
func TestServerOwnState(t *testing.T) {
	state := t.TempDir()
	home := "/home/me"
	mem := Server{Name: "memory", Type: TransportStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory@2026.8.31"}}
	st, err := ServerOwnState(mem, state, home)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(state, "data", "memory")
	if st.Data != data || !slices.Equal(st.Env, []string{"MEMORY_FILE_PATH=" + data + "/memory.jsonl"}) || st.Known == nil {
		t.Errorf("memory: %+v", st)
	}
	if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data folder: %v", err)
	}
	mem.Env = map[string]string{"MEMORY_FILE_PATH": "/home/me/graph.jsonl"}
	if st, _ := ServerOwnState(mem, state, home); len(st.Env) != 0 {
		t.Errorf("the configuration's own MEMORY_FILE_PATH was overridden: %q", st.Env)
	}
	dc := Server{Name: "dc", Type: TransportStdio, Command: "/x/node_modules/.bin/desktop-commander"}
	if st, _ := ServerOwnState(dc, state, home); !slices.Equal(st.Own, []string{"/home/me/.claude-server-commander/", "/home/me/.claude-server-commander-logs/"}) {
		t.Errorf("desktop-commander's own: %q", st.Own)
	}
	other := Server{Name: "other", Type: TransportStdio, Command: "srv"}
	if st, _ := ServerOwnState(other, state, home); st.Known != nil || len(st.Env)+len(st.Own) != 0 {
		t.Errorf("an unknown server: %+v", st)
	}
	if err := RemoveServerFiles(state, "memory"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("data folder still there: %v", err)
	}
	for _, bad := range []string{"", "a/b"} {
		if _, err := ServerDataFolder(state, bad); err == nil {
			t.Errorf("name %q named a folder", bad)
		}
	}
	seen := map[string]string{}
	for _, odd := range []string{".", "..", "%2E", "%2E%2E", "a%b"} {
		p, err := ServerDataFolder(state, odd)
		if err != nil || filepath.Dir(p) != filepath.Join(state, "data") || seen[p] != "" {
			t.Errorf("ServerDataFolder(%q) = %q, %v (also %q's)", odd, p, err, seen[p])
		}
		seen[p] = odd
	}
}

// TestServerGitIdentity: a confined server's own git settings get the
// person's name and email, nothing else of their git config (a token in
// another section stays behind), once: the server's own file is then left
// as it is.
func TestServerGitIdentity(t *testing.T) {
	home, state := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = \"Ada Lovelace\"\n\temail = ada@example.com ; work\n"+
		"[http \"https://example.com\"]\n\textraHeader = Authorization: Bearer SECRET\n[user]\n\tsigningkey = ABC\n"), 0o600)
	srv := Server{Name: "git", Type: TransportStdio, Command: "git-mcp-server"}
	st, err := ServerOwnState(srv, state, home)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(st.Data, "gitconfig"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "[user]\n\tname = \"Ada Lovelace\"\n\temail = \"ada@example.com\"\n" {
		t.Errorf("gitconfig:\n%s", got)
	}
	os.WriteFile(filepath.Join(st.Data, "gitconfig"), []byte("[core]\n"), 0o600)
	ServerOwnState(srv, state, home)
	if again, _ := os.ReadFile(filepath.Join(st.Data, "gitconfig")); string(again) != "[core]\n" {
		t.Errorf("the server's own git settings were rewritten: %q", again)
	}
}
