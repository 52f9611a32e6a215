package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"rootkeeper/app/osfile"
)

// A server that runs something else under the same name loses its
// decisions; one whose roots mode or sampling changes keeps them; an
// explicit keep keeps them.
func TestPutServerDropsDecisionsOfAnotherProgram(t *testing.T) {
	base := Server{Name: "filesystem", Type: TransportStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem"}}
	setup := func() *State {
		st := &State{}
		if err := st.AddServer(base); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"/a", "/b"} {
			st.AddRoot(Root{Path: p, Enabled: true})
			st.Decide(Decision{Server: "filesystem", Root: p, Verdict: Allow})
		}
		return st
	}
	variants := map[string]func(*Server){
		"command": func(s *Server) { s.Args = []string{"evil-pkg"} },
		"env":     func(s *Server) { s.Env = map[string]string{"NODE_OPTIONS": "--require /tmp/x.js"} },
		"cwd":     func(s *Server) { s.Cwd = "/tmp" },
		"remote":  func(s *Server) { s.Type, s.Command, s.Args, s.URL = TransportHTTP, "", nil, "https://evil.example/mcp" },
	}
	for name, change := range variants {
		st := setup()
		srv := base
		change(&srv)
		res, err := st.PutServer(srv, PutOptions{Replace: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Dropped != 2 || !res.NewProgram || len(st.Decisions) != 0 {
			t.Errorf("%s changed: dropped %d, decisions left %v", name, res.Dropped, st.Decisions)
		}
		st = setup()
		if res, _ := st.PutServer(srv, PutOptions{Replace: true, KeepDecisions: true}); res.Dropped != 0 || len(st.Decisions) != 2 {
			t.Errorf("%s changed with keep: dropped %d", name, res.Dropped)
		}
	}
	st := setup()
	srv := base
	srv.RootsMode, srv.Sampling = RootsEnv, SamplingOff
	res, err := st.PutServer(srv, PutOptions{Replace: true, Given: SetRootsMode | SetSampling})
	if err != nil || res.Dropped != 0 || len(st.Decisions) != 2 {
		t.Errorf("a new roots mode dropped %d decisions (%v)", res.Dropped, err)
	}
	if got, _ := st.Server("filesystem"); got.RootsMode != RootsEnv || got.Sampling != SamplingOff {
		t.Errorf("the new roots mode and sampling were not stored: %+v", got)
	}
}

func TestServerNamesRefuseInvisibleAndPathCharacters(t *testing.T) {
	for _, name := range []string{"a\u202eb", "zero\u200bwidth", "a\\b", "c:d", "a/b", "bell\x07", "new\nline", "\ufeffbom"} {
		if err := ValidateServer(Server{Name: name, Type: TransportStdio, Command: "x"}); err == nil {
			t.Errorf("server name %q accepted", name)
		}
	}
	for _, name := range []string{"filesystem", "claude-code.fs", "日本", "a_b-1"} {
		if err := ValidateServer(Server{Name: name, Type: TransportStdio, Command: "x"}); err != nil {
			t.Errorf("server name %q refused: %v", name, err)
		}
	}
}

// A state file holding both allow and deny for one pair, or a scope or
// verdict nobody knows, never exposes the pair, and says why.
func TestDenyWinsAndUnknownScopesAreRefused(t *testing.T) {
	st := State{
		Roots:   []Root{{Path: "/a", Enabled: true}, {Path: "/b", Enabled: true}, {Path: "/c", Enabled: true}},
		Servers: []Server{{Name: "fs", Type: TransportStdio, Command: "x"}},
		Decisions: []Decision{
			{Server: "fs", Root: "/a", Verdict: Allow, Scope: Always},
			{Server: "fs", Root: "/a", Verdict: Deny, Scope: Always},
			{Server: "fs", Root: "/b", Verdict: Allow, Scope: "forever"},
			{Server: "fs", Root: "/c", Verdict: "yes", Scope: Always},
		},
	}
	snap := &Snapshot{State: st, Health: map[string]Health{"/a": {Status: HealthOK}, "/b": {Status: HealthOK}, "/c": {Status: HealthOK}}}
	if got := VisiblePaths(snap, "fs"); len(got) != 0 {
		t.Fatalf("visible %q, want nothing", got)
	}
	if got := AllowedBy(snap, "/a"); len(got) != 0 {
		t.Errorf("AllowedBy(/a) = %q", got)
	}
	problems := strings.Join(ConflictingDecisions(&st), "\n")
	for _, want := range []string{"both allow and deny for /a", `unknown scope "forever"`, `unknown verdict "yes"`} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems %q lack %q", problems, want)
		}
	}
}

func TestCoveredBy(t *testing.T) {
	st := State{
		Roots:     []Root{{Path: "/home/me", Enabled: true}, {Path: "/home/me/secret", Enabled: true}, {Path: "/home/meow", Enabled: true}},
		Servers:   []Server{{Name: "fs", Type: TransportStdio, Command: "x"}},
		Decisions: []Decision{{Server: "fs", Root: "/home/me", Verdict: Allow, Scope: Always}, {Server: "fs", Root: "/home/meow", Verdict: Allow, Scope: Always}},
	}
	snap := &Snapshot{State: st, Health: map[string]Health{"/home/me": {Status: HealthOK}, "/home/meow": {Status: HealthOK}}}
	got := CoveredBy(snap, "fs", "/home/me/secret")
	if len(got) != 1 || got[0].Path != "/home/me" {
		t.Fatalf("CoveredBy = %v, want /home/me only", got)
	}
	if got := CoveredBy(snap, "fs", "/home/meowx"); len(got) != 0 {
		t.Fatalf("a name prefix counted as a parent: %v", got)
	}
}

func TestServerEnvWithholdsKeysAndPrivateVariables(t *testing.T) {
	st := &State{Sampling: &SamplingConfig{APIKeyEnv: "MY_MODEL_KEY"}}
	if err := st.SetPrivateEnv("DB_PASSWORD", true); err != nil {
		t.Fatal(err)
	}
	base := []string{"PATH=/usr/bin", "MY_MODEL_KEY=k1", "ANTHROPIC_API_KEY=k2", "OPENAI_API_KEY=k3", "DB_PASSWORD=pw", "HOME=/home/me", "ODD=a=b"}
	env := ServerEnv(base, st, map[string]string{"OPENAI_API_KEY": "the server's own", "EXTRA": "1", "HOME": "/srv"})
	want := []string{"PATH=/usr/bin", "ODD=a=b", "EXTRA=1", "HOME=/srv", "OPENAI_API_KEY=the server's own"}
	if !slices.Equal(env, want) {
		t.Fatalf("ServerEnv = %q, want %q", env, want)
	}
	if err := st.SetPrivateEnv("BAD=NAME", true); err == nil {
		t.Error("an invalid variable name was accepted")
	}
}

// A folder name holding the old separator cannot split the env-mode list.
func TestEncodeRootsEnvKeepsEveryFolderWhole(t *testing.T) {
	paths := []string{"/tmp/x:/tmp/secret", "/a b", "/quote\"d", "/new\nline"}
	var got []string
	if err := json.Unmarshal([]byte(EncodeRootsEnv(paths)), &got); err != nil || !slices.Equal(got, paths) {
		t.Fatalf("round trip: %q, %v", got, err)
	}
	if EncodeRootsEnv(nil) != "[]" {
		t.Errorf("no roots = %q, want []", EncodeRootsEnv(nil))
	}
}

// A state folder someone else could write to is refused, and so is a
// symlink to one.
func TestStateFolderMustBePrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("mode bits do not say who may write on Windows (see osfile.WritableByOthers)")
	}
	parent := t.TempDir()
	open := filepath.Join(parent, "open")
	os.Mkdir(open, 0o700)
	os.Chmod(open, 0o777)
	if _, err := OpenStore(open); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("world-writable folder: %v", err)
	}
	group := filepath.Join(parent, "group")
	os.Mkdir(group, 0o700)
	os.Chmod(group, 0o770)
	if _, err := OpenStore(group); err == nil {
		t.Error("group-writable folder accepted")
	}
	real := filepath.Join(parent, "real")
	os.Mkdir(real, 0o700)
	link := filepath.Join(parent, "link")
	os.Symlink(real, link)
	if _, err := OpenStore(link); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("symlinked folder: %v", err)
	}
	// Someone else's folder (a folder's owner is a unix notion here): as
	// root, one given to nobody; as anyone else, one of root's (the tests'
	// own temp folder's parent is /tmp, which others may write to, so /).
	if _, unix := osfile.OwnerOf(mustStat(t, parent)); unix {
		theirs, owner := "/", "0"
		if os.Geteuid() == 0 {
			theirs, owner = filepath.Join(parent, "theirs"), "65534"
			os.Mkdir(theirs, 0o700)
			os.Chown(theirs, 65534, 65534)
		}
		if _, err := OpenStore(theirs); err == nil || !strings.Contains(err.Error(), "belongs to user "+owner) {
			t.Errorf("someone else's folder: %v", err)
		}
	}
	if _, err := OpenStore(real); err != nil {
		t.Errorf("a private folder was refused: %v", err)
	}
	var ie *InputError
	if _, err := OpenStore(open); err == nil || !asInput(err, &ie) {
		t.Errorf("refusal is not an input error (exit 2): %v", err)
	}
}

func asInput(err error, target **InputError) bool {
	e, ok := err.(*InputError)
	*target = e
	return ok
}

func mustStat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
