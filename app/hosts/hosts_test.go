package hosts

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"rootkeeper/app"
	"rootkeeper/app/serverentry"
)

const fakeExe = "/opt/rootkeeper/bin/rootkeeper"

type fixture struct {
	host, file string
	// where the fixture goes, relative to the test's home
	at      func(w World) string
	bridged []string // host names expected bridged
	skipped []string
}

var fixtures = []fixture{
	{host: "claude-code", file: "claude.json", bridged: []string{"fs", "github", "remote", "fs"}},
	{host: "vscode", file: "vscode.json", bridged: []string{"memory"}, skipped: []string{"api", "ws"}},
	{host: "zed", file: "zed.json", bridged: []string{"everything", "legacy"}, skipped: []string{"from-extension"}},
	{host: "gemini", file: "gemini.json", bridged: []string{"py", "web"}},
	{host: "windsurf", file: "windsurf.json", bridged: []string{"remote", "local"}},
	{host: "cursor", file: "windsurf.json", bridged: []string{"remote", "local"}},
	{host: "claude-desktop", file: "windsurf.json", bridged: []string{"remote", "local"}},
	{host: "cline", file: "windsurf.json", bridged: []string{"remote", "local"}},
	{host: "codex", file: "codex.toml", bridged: []string{"fs", "docs"}, skipped: []string{"secret"}},
	{host: "goose", file: "goose.yaml", bridged: []string{"github", "search"}, skipped: []string{"developer"}},
	{host: "vscode-insiders", file: "vscode.json", bridged: []string{"memory"}, skipped: []string{"api", "ws"}},
	{host: "vscodium", file: "vscode.json", bridged: []string{"memory"}, skipped: []string{"api", "ws"}},
	{host: "qwen", file: "qwen.json", bridged: []string{"fs", "web"}},
	{host: "roo", file: "roo.json", bridged: []string{"local", "remote", "old"}},
	{host: "kilo", file: "roo.json", bridged: []string{"local", "remote", "old"}},
	{host: "continue", file: "continue.yaml", bridged: []string{"SQLite", "time", "docs", "search"}, skipped: []string{"from-workspace"}},
	{host: "opencode", file: "opencode.jsonc", bridged: []string{"fs", "context7"}, skipped: []string{"sentry"}},
	{host: "crush", file: "crush.json", bridged: []string{"filesystem", "github"}},
	{host: "copilot", file: "copilot.json", bridged: []string{"fs", "stripe"}},
	{host: "amp", file: "amp.json", bridged: []string{"playwright", "linear"}},
	{host: "augment", file: "augment.json", bridged: []string{"fs"}},
	{host: "factory", file: "kiro.json", bridged: []string{"fetch", "aws-docs"}},
	{host: "kiro", file: "kiro.json", bridged: []string{"fetch", "aws-docs"}},
	{host: "junie", file: "windsurf.json", bridged: []string{"remote", "local"}},
	{host: "amazonq", file: "kiro.json", bridged: []string{"fetch", "aws-docs"}},
	{host: "lmstudio", file: "windsurf.json", bridged: []string{"remote", "local"}},
	{host: "trae", file: "windsurf.json", bridged: []string{"remote", "local"}},
}

// TestEveryHostHasAFixture: a host added to the table is tested in its
// real format.
func TestEveryHostHasAFixture(t *testing.T) {
	have := map[string]bool{}
	for _, fx := range fixtures {
		have[fx.host] = true
	}
	for _, h := range Hosts {
		if !have[h.ID] {
			t.Errorf("host %s has no fixture", h.ID)
		}
	}
	if len(Hosts) < 24 {
		t.Errorf("%d hosts known", len(Hosts))
	}
}

// testWorld makes a home folder, a project folder in it and a state store.
func testWorld(t *testing.T) (World, string, *app.Store) {
	t.Helper()
	home := t.TempDir()
	project := filepath.Join(home, "src", "proj")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	project, _ = filepath.EvalSymlinks(project)
	store, err := app.OpenStore(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	w := World{GOOS: "linux", Home: home, XDGConfigHome: filepath.Join(home, ".config")}
	return w, project, store
}

// install puts a fixture where host h looks for it, PROJECT replaced.
func install(t *testing.T, h *Host, w World, file, project string) (string, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte("PROJECT"), []byte(project))
	path := h.Files(w)[0]
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o640); err != nil {
		t.Fatal(err)
	}
	return path, data
}

func TestProtectRestoreFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.host, func(t *testing.T) {
			h, ok := Lookup(fx.host)
			if !ok {
				t.Fatalf("no host %q", fx.host)
			}
			w, project, store := testWorld(t)
			path, orig := install(t, h, w, fx.file, project)
			o := Options{World: w, Store: store, Executable: fakeExe, StateDirArg: store.Dir()}

			before, err := parseDoc(h.Format, path, "", orig)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Protect(h, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 || !res[0].Written {
				t.Fatalf("protect wrote %+v", res)
			}
			var bridged, skipped []string
			for _, ch := range res[0].Changes {
				bridged = append(bridged, ch.Entry.Name)
			}
			for _, e := range res[0].Skipped {
				skipped = append(skipped, e.Name)
			}
			sort.Strings(bridged)
			sort.Strings(skipped)
			want := slices.Sorted(slices.Values(fx.bridged))
			if d := cmp.Diff(want, bridged); d != "" {
				t.Errorf("bridged (-want +got):\n%s", d)
			}
			if d := cmp.Diff(slices.Sorted(slices.Values(fx.skipped)), skipped); d != "" {
				t.Errorf("skipped (-want +got):\n%s", d)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode became %v", fi.Mode().Perm())
			}

			// Read back by the format's own rules: every bridged entry
			// runs the bridge, and nothing else changed.
			now, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			after, err := parseDoc(h.Format, path, "", now)
			if err != nil {
				t.Fatalf("protected file does not parse: %v\n%s", err, now)
			}
			st, _ := store.Load()
			origTree, newTree := whole(before), whole(after)
			for _, ch := range res[0].Changes {
				n := len(ch.Entry.Key)
				e := readEntry(h, after, serverTable{key: ch.Entry.Key[:n-1]}, ch.Entry.Key[n-1])
				if !e.Protected || e.Server.Command != fakeExe {
					t.Errorf("%s is not bridged: %+v", ch.Entry.Name, e.Server)
				}
				wantArgs := []string{"--state-dir", store.Dir(), "bridge", ch.Entry.Rootkeeper}
				if d := cmp.Diff(wantArgs, e.Server.Args); d != "" {
					t.Errorf("%s args (-want +got):\n%s", ch.Entry.Name, d)
				}
				if _, ok := st.Server(ch.Entry.Rootkeeper); !ok {
					t.Errorf("%s is not in Rootkeeper's state", ch.Entry.Rootkeeper)
				}
				for _, tr := range []map[string]any{origTree, newTree} {
					forget(tr, ch.Entry, movedEnv(ch))
				}
			}
			if d := cmp.Diff(origTree, newTree); d != "" {
				t.Errorf("protect changed more than the bridged fields (-before +after):\n%s\n%s", d, now)
			}
			if fx.host == "codex" && !bytes.Contains(now, []byte("# the filesystem server")) {
				t.Errorf("a comment went:\n%s", now)
			}

			list, err := List(o)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 || list[0].Protected != len(fx.bridged) || list[0].Files[0].ChangedSinceProtect {
				t.Errorf("list after protect: %+v", list)
			}

			// Protecting again changes nothing.
			res2, err := Protect(h, o)
			if err != nil || len(res2) != 1 || res2[0].Written || res2[0].Already != len(fx.bridged) {
				t.Errorf("second protect: %+v %v", res2, err)
			}

			if _, err := Restore(h, o); err != nil {
				t.Fatal(err)
			}
			back, _ := os.ReadFile(path)
			if !bytes.Equal(back, orig) {
				t.Errorf("restore is not byte for byte:\n%s", back)
			}

			// Edited since protect (a line added at the end): restore
			// puts back each entry's fields, in their places.
			if _, err := Protect(h, o); err != nil {
				t.Fatal(err)
			}
			edited := append(mustRead(t, path), '\n')
			os.WriteFile(path, edited, 0o640)
			rr, err := Restore(h, o)
			if err != nil || rr[0].How != "entries" {
				t.Fatalf("restore after an edit: %+v %v", rr, err)
			}
			if back := mustRead(t, path); !bytes.Equal(back, append(bytes.Clone(orig), '\n')) {
				t.Errorf("restore of an edited file:\n%s\nwant\n%s\n", back, orig)
			}
		})
	}
}

// forget removes from tree the fields protect may change in entry e.
// movedEnv are the env values protect moved off the host's entry into the
// server's stored env: its env slots.
func movedEnv(ch Change) []string {
	var out []string
	for _, sl := range ch.Slots {
		if sl.Env != "" {
			out = append(out, ch.Server.Env[sl.Env])
		}
	}
	return out
}

func forget(tree map[string]any, e Entry, requests []string) {
	v, ok := dig(tree, e.base)
	if !ok {
		return
	}
	m := v.(map[string]any)
	delete(m, e.d.Command)
	delete(m, e.d.Args)
	delete(m, e.d.Headers)
	if e.d.Type != "" {
		delete(m, e.d.Type)
	}
	for _, u := range e.d.URLs {
		delete(m, u.Key)
	}
	if env, ok := m[e.d.Env].(map[string]any); ok {
		for k, v := range env {
			if s, ok := v.(string); ok && slices.Contains(requests, s) {
				delete(env, k)
			}
		}
	}
}

func TestProtectKeepsFoldersAsSlotsAndKeepsVariables(t *testing.T) {
	h, _ := Lookup("codex")
	w, project, store := testWorld(t)
	path, _ := install(t, h, w, "codex.toml", project)
	o := Options{World: w, Store: store, Executable: fakeExe}
	if _, err := Protect(h, o); err != nil {
		t.Fatal(err)
	}
	st, _ := store.Load()
	srv, ok := st.Server("codex.fs")
	if !ok {
		t.Fatalf("no codex.fs in %+v", st.Servers)
	}
	// The configuration is kept whole: the folder stays on the command
	// line, and the env folder (which the bridge could not hold in the
	// host's file) moves as written into the stored env. Both are slots,
	// one question.
	if d := cmp.Diff([]string{"-y", "@modelcontextprotocol/server-filesystem", project}, srv.Args); d != "" {
		t.Errorf("stored args (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"DATA_DIR": project}, srv.Env); d != "" {
		t.Errorf("stored env (-want +got):\n%s", d)
	}
	wantSlots := []app.Slot{{Path: project, Given: project, Arg: 2}, {Path: project, Given: project, Arg: -1, Env: "DATA_DIR"}}
	if d := cmp.Diff(wantSlots, srv.Slots); d != "" {
		t.Errorf("slots (-want +got):\n%s", d)
	}
	if len(st.Requests) != 1 || st.Requests[0].Path != project || st.Requests[0].Server != "codex.fs" {
		t.Errorf("requests: %+v", st.Requests)
	}
	data, _ := os.ReadFile(path)
	if bytes.Contains(data, []byte("DATA_DIR")) || !bytes.Contains(data, []byte(`LOG_LEVEL = "debug"`)) {
		t.Errorf("env folder not moved off the host's entry, or other env lost:\n%s", data)
	}
	docs, _ := st.Server("codex.docs")
	if docs.Type != app.TransportHTTP || docs.URL != "https://docs.example.com/mcp" || docs.Headers["X-Client"] != "codex" {
		t.Errorf("remote server stored as %+v", docs)
	}

	// VS Code: a variable in env stays in the host's file, unresolved,
	// and Rootkeeper stores no env.
	vh, _ := Lookup("vscode")
	vpath, _ := install(t, vh, w, "vscode.json", project)
	res, err := Protect(vh, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := res[0].Changes[0].HostEnv; !slices.Equal(got, []string{"MEMORY_FILE"}) {
		t.Errorf("host env: %v", got)
	}
	vdata, _ := os.ReadFile(vpath)
	for _, keep := range []string{`"MEMORY_FILE": "${env:HOME}/mem.json"`, "// the memory server", "// keep me", `"Bearer ${input:token}"`} {
		if !bytes.Contains(vdata, []byte(keep)) {
			t.Errorf("%s went from the file:\n%s", keep, vdata)
		}
	}
	st, _ = store.Load()
	for _, s := range st.Servers {
		for _, v := range s.Env {
			if serverentry.HasHostVariable(v) || strings.Contains(v, "ghp_") {
				t.Errorf("%s stores %q", s.Name, v)
			}
		}
	}
}

func TestRestoreAfterHostEdit(t *testing.T) {
	h, _ := Lookup("claude-code")
	w, project, store := testWorld(t)
	path, orig := install(t, h, w, "claude.json", project)
	o := Options{World: w, Store: store, Executable: fakeExe}
	if _, err := Protect(h, o); err != nil {
		t.Fatal(err)
	}
	// The host edits the file: a key of its own, and the person points
	// one bridged entry elsewhere.
	data, _ := os.ReadFile(path)
	d, err := parseDoc(JSON, path, "", data)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.put([]string{"numStartups"}, "", []byte("43")); err != nil {
		t.Fatal(err)
	}
	if err := d.put([]string{"mcpServers", "github", "command"}, "", []byte(`"gh-mcp"`)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, d.bytes(), 0o600)

	res, err := Restore(h, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].How != "entries" || !slices.Equal(res[0].Kept, []string{"github"}) {
		t.Fatalf("restore: %+v", res)
	}
	back, _ := os.ReadFile(path)
	bd, err := parseDoc(JSON, path, "", back)
	if err != nil {
		t.Fatal(err)
	}
	od, _ := parseDoc(JSON, path, "", orig)
	for _, k := range [][]string{{"mcpServers", "fs"}, {"mcpServers", "remote"}, {"projects", project, "mcpServers", "fs"}} {
		got, _ := bd.get(k)
		want, _ := od.get(k)
		if !bytes.Equal(got, want) {
			t.Errorf("%v not put back:\n%s\nwant\n%s", k, got, want)
		}
	}
	if !bytes.Contains(back, []byte(`"numStartups": 43`)) || !bytes.Contains(back, []byte(`"gh-mcp"`)) {
		t.Errorf("the host's edits went:\n%s", back)
	}
}

func TestConcurrentEditLosesNothing(t *testing.T) {
	h, _ := Lookup("cursor")
	w, project, store := testWorld(t)
	path, _ := install(t, h, w, "windsurf.json", project)
	o := Options{World: w, Store: store, Executable: fakeExe}
	writes := 0
	beforeReplace = func(p string) {
		if writes > 0 || p != path {
			return
		}
		writes++
		// The host adds a server between Rootkeeper's read and replace.
		data, _ := os.ReadFile(p)
		data = bytes.Replace(data, []byte(`"mcpServers": {`), []byte(`"mcpServers": {
    "added": { "command": "added-mcp", "args": [] },`), 1)
		os.WriteFile(p, data, 0o600)
	}
	t.Cleanup(func() { beforeReplace = nil })
	res, err := Protect(h, o)
	if err != nil {
		t.Fatal(err)
	}
	if writes != 1 {
		t.Fatalf("the hook ran %d times", writes)
	}
	data, _ := os.ReadFile(path)
	d, err := parseDoc(JSON, path, "", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entriesOf(h, d) {
		if !e.Protected {
			t.Errorf("%s not protected after the concurrent edit:\n%s", e.Name, data)
		}
	}
	if n := len(res[0].Changes); n != 3 {
		t.Errorf("%d changes, want 3 (the host's new server too)", n)
	}
	if _, err := Restore(h, o); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(path)
	if !bytes.Contains(data, []byte(`"added-mcp"`)) {
		t.Errorf("the host's server was lost by restore:\n%s", data)
	}
}

func TestUnparseableFileIsLeftAlone(t *testing.T) {
	for _, c := range []struct{ host, text string }{
		{"claude-code", `{"mcpServers": {"fs": {"command": "x",}`},
		{"codex", "[mcp_servers.fs\ncommand = 1"},
		{"goose", "extensions:\n  a: [\n"},
		{"zed", `{"context_servers": {"x": {"command": "y"}} /* open`},
	} {
		h, _ := Lookup(c.host)
		w, _, store := testWorld(t)
		path := h.Files(w)[0]
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, []byte(c.text), 0o600)
		_, err := Protect(h, Options{World: w, Store: store, Executable: fakeExe})
		var pe *ParseError
		if err == nil || !errorsAs(err, &pe) || pe.ExitCode() != 2 || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: protect of garbage: %v", c.host, err)
		}
		if data, _ := os.ReadFile(path); string(data) != c.text {
			t.Errorf("%s: garbage was rewritten", c.host)
		}
		if entries, _ := os.ReadDir(filepath.Join(store.Dir(), "hosts", "backups")); len(entries) != 0 {
			t.Errorf("%s: backups of an unparseable file", c.host)
		}
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	h, _ := Lookup("goose")
	w, project, store := testWorld(t)
	path, orig := install(t, h, w, "goose.yaml", project)
	res, err := Protect(h, Options{World: w, Store: store, Executable: fakeExe, DryRun: true})
	if err != nil || len(res) != 1 || len(res[0].Changes) != 2 || res[0].Written {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	if data, _ := os.ReadFile(path); !bytes.Equal(data, orig) {
		t.Error("dry run wrote the file")
	}
	if st, _ := store.Load(); len(st.Servers) != 0 {
		t.Errorf("dry run added servers: %+v", st.Servers)
	}
	if _, err := os.Stat(recordPath(store.Dir())); err == nil {
		t.Error("dry run wrote a record")
	}
}

func TestNamesDoNotCollide(t *testing.T) {
	seen := map[string]string{}
	for _, c := range [][3]string{
		{"claude-code", "", "fs"}, {"claude-code", baseTag("/a/api"), "fs"}, {"claude-code", baseTag("/b/api"), "fs"},
		{"cursor", "", "fs"}, {"claude-code", "", "f s"}, {"claude-code", "", "f_s"}, {"claude-code", "", "f:s"},
	} {
		n := rootkeeperName(c[0], c[1], c[2])
		if prev, ok := seen[n]; ok {
			t.Errorf("%v and %s both named %q", c, prev, n)
		}
		seen[n] = strings.Join(c[:], "|")
		if err := app.ValidateServer(app.Server{Name: n, Type: app.TransportStdio, Command: "x"}); err != nil {
			t.Errorf("%q: %v", n, err)
		}
	}
}

func TestWithheldEnvReachesTheServer(t *testing.T) {
	h, _ := Lookup("claude-desktop")
	w, _, store := testWorld(t)
	path := h.Files(w)[0]
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(`{"mcpServers": {"ai": {"command": "ai-mcp",
  "env": {"ANTHROPIC_API_KEY": "sk-literal", "OPENAI_API_KEY": "${OPENAI_API_KEY}", "PLAIN": "x"}}}}`), 0o600)
	res, err := Protect(h, Options{World: w, Store: store, Executable: fakeExe})
	if err != nil {
		t.Fatal(err)
	}
	ch := res[0].Changes[0]
	if !slices.Equal(ch.StoredEnv, []string{"ANTHROPIC_API_KEY"}) || !slices.Equal(ch.LostEnv, []string{"OPENAI_API_KEY"}) {
		t.Errorf("stored %v, lost %v", ch.StoredEnv, ch.LostEnv)
	}
	st, _ := store.Load()
	srv, _ := st.Server("claude-desktop.ai")
	if d := cmp.Diff(map[string]string{"ANTHROPIC_API_KEY": "sk-literal"}, srv.Env); d != "" {
		t.Errorf("stored env (-want +got):\n%s", d)
	}
	env := app.ServerEnv([]string{"ANTHROPIC_API_KEY=sk-literal", "PLAIN=x"}, &st, srv.Env)
	if !slices.Contains(env, "ANTHROPIC_API_KEY=sk-literal") || !slices.Contains(env, "PLAIN=x") {
		t.Errorf("the server's environment through the bridge: %v", env)
	}
}

func TestCRLFFileKeepsItsLineEnds(t *testing.T) {
	h, _ := Lookup("codex")
	w, _, store := testWorld(t)
	path := h.Files(w)[0]
	os.MkdirAll(filepath.Dir(path), 0o755)
	orig := "model = \"o3\"\r\n\r\n[mcp_servers.x]\r\nenabled = true\r\ncommand = \"x-mcp\"\r\n"
	os.WriteFile(path, []byte(orig), 0o600)
	o := Options{World: w, Store: store, Executable: fakeExe}
	if _, err := Protect(h, o); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if bytes.Count(data, []byte("\n")) != bytes.Count(data, []byte("\r\n")) || !bytes.Contains(data, []byte(`args = ["bridge", "codex.x"]`)) {
		t.Errorf("protected:\n%q", data)
	}
	if _, err := Restore(h, o); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != orig {
		t.Errorf("restored:\n%q", data)
	}
}

// TestByteOrderMarkIsKept: a config written by a Windows editor, a byte
// order mark first and CRLF line ends, is protected (the mark and the line
// ends kept) and restored byte for byte.
func TestByteOrderMarkIsKept(t *testing.T) {
	h, _ := Lookup("claude-desktop")
	w, _, store := testWorld(t)
	path := h.Files(w)[0]
	os.MkdirAll(filepath.Dir(path), 0o755)
	orig := "\ufeff{\r\n  \"mcpServers\": {\r\n    \"x\": {\"command\": \"x-mcp\"}\r\n  }\r\n}\r\n"
	os.WriteFile(path, []byte(orig), 0o600)
	o := Options{World: w, Store: store, Executable: fakeExe}
	found, err := List(o)
	if err != nil || len(found) != 1 || len(found[0].Files) != 1 || found[0].Files[0].Err != "" || len(found[0].Files[0].Entries) != 1 {
		t.Fatalf("listed: %+v %v", found, err)
	}
	if _, err := Protect(h, o); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !bytes.HasPrefix(data, []byte("\ufeff{")) || bytes.Count(data, []byte("\n")) != bytes.Count(data, []byte("\r\n")) || !bytes.Contains(data, []byte(`"bridge"`)) {
		t.Errorf("protected:\n%q", data)
	}
	if _, err := Restore(h, o); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != orig {
		t.Errorf("restored:\n%q", data)
	}
}

func TestSymlinkedConfigStaysALink(t *testing.T) {
	h, _ := Lookup("cursor")
	w, project, store := testWorld(t)
	path, orig := install(t, h, w, "windsurf.json", project)
	real := filepath.Join(w.Home, "dotfiles", "cursor-mcp.json")
	os.MkdirAll(filepath.Dir(real), 0o755)
	os.Rename(path, real)
	if err := os.Symlink(real, path); err != nil {
		t.Fatal(err)
	}
	o := Options{World: w, Store: store, Executable: fakeExe}
	if _, err := Protect(h, o); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(path); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced by a file")
	}
	if data, _ := os.ReadFile(real); !bytes.Contains(data, []byte(fakeExe)) {
		t.Errorf("the linked file was not protected:\n%s", data)
	}
	Restore(h, o)
	if data, _ := os.ReadFile(path); !bytes.Equal(data, orig) {
		t.Errorf("restore through the link:\n%s", data)
	}
}

func TestPathsPerOS(t *testing.T) {
	for _, c := range []struct{ goos, host, want string }{
		{"linux", "claude-desktop", "/h/.cfg/Claude/claude_desktop_config.json"},
		{"darwin", "claude-desktop", "/h/Library/Application Support/Claude/claude_desktop_config.json"},
		{"windows", "claude-desktop", "/appdata/Claude/claude_desktop_config.json"},
		{"linux", "vscode", "/h/.cfg/Code/User/mcp.json"},
		{"darwin", "vscode", "/h/Library/Application Support/Code/User/mcp.json"},
		{"linux", "cline", "/h/.cfg/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"},
		{"linux", "zed", "/h/.cfg/zed/settings.json"},
		{"darwin", "zed", "/h/.cfg/zed/settings.json"},
		{"windows", "zed", "/appdata/zed/settings.json"},
		{"linux", "goose", "/h/.cfg/goose/config.yaml"},
		{"windows", "goose", "/appdata/Block/goose/config/config.yaml"},
		{"darwin", "claude-code", "/h/.claude.json"},
		{"linux", "codex", "/h/.codex/config.toml"},
		{"linux", "gemini", "/h/.gemini/settings.json"},
		{"linux", "windsurf", "/h/.codeium/windsurf/mcp_config.json"},
		{"linux", "cursor", "/h/.cursor/mcp.json"},
	} {
		h, _ := Lookup(c.host)
		w := World{GOOS: c.goos, Home: "/h", XDGConfigHome: "/h/.cfg", AppData: "/appdata"}
		if got := filepath.ToSlash(h.Files(w)[0]); got != c.want {
			t.Errorf("%s on %s: %s, want %s", c.host, c.goos, got, c.want)
		}
	}
	w := World{GOOS: "linux", Home: "/h", Getenv: func(k string) string {
		return map[string]string{"CLAUDE_CONFIG_DIR": "/cc", "CODEX_HOME": "/cx"}[k]
	}}
	for _, c := range []struct{ goos, host, want string }{
		{"darwin", "vscode-insiders", "/h/Library/Application Support/Code - Insiders/User/mcp.json"},
		{"windows", "vscodium", "/appdata/VSCodium/User/mcp.json"},
		{"linux", "roo", "/h/.cfg/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json"},
		{"windows", "kilo", "/appdata/Code/User/globalStorage/kilocode.kilo-code/settings/mcp_settings.json"},
		{"windows", "continue", "/h/.continue/config.yaml"},
		{"linux", "opencode", "/h/.cfg/opencode/opencode.json"},
		{"linux", "crush", "/h/.cfg/crush/crush.json"},
		{"windows", "crush", "/h/AppData/Local/crush/crush.json"},
		{"darwin", "copilot", "/h/.copilot/mcp-config.json"},
		{"linux", "qwen", "/h/.qwen/settings.json"},
		{"linux", "amp", "/h/.cfg/amp/settings.json"},
		{"windows", "amp", "/h/.config/amp/settings.json"},
		{"darwin", "augment", "/h/.augment/settings.json"},
		{"linux", "factory", "/h/.factory/mcp.json"},
		{"linux", "kiro", "/h/.kiro/settings/mcp.json"},
		{"linux", "junie", "/h/.junie/mcp/mcp.json"},
		{"windows", "amazonq", "/h/.aws/amazonq/mcp.json"},
		{"windows", "lmstudio", "/h/.lmstudio/mcp.json"},
		{"darwin", "trae", "/h/Library/Application Support/Trae/User/mcp.json"},
	} {
		h, _ := Lookup(c.host)
		w := World{GOOS: c.goos, Home: "/h", XDGConfigHome: "/h/.cfg", AppData: "/appdata"}
		if got := filepath.ToSlash(h.Files(w)[0]); got != c.want {
			t.Errorf("%s on %s: %s, want %s", c.host, c.goos, got, c.want)
		}
	}
	// Every variable a host honours moves its file.
	vars := map[string]string{"GEMINI_CLI_HOME": "/gh", "QWEN_HOME": "/qh", "COPILOT_HOME": "/ch",
		"CRUSH_GLOBAL_CONFIG": "/crush", "OPENCODE_CONFIG": "/oc/my.json", "CONTINUE_GLOBAL_DIR": "/cont",
		"LOCALAPPDATA": "/lad"}
	ew := World{GOOS: "linux", Home: "/h", Getenv: func(k string) string { return vars[k] }}
	for host, want := range map[string]string{"gemini": "/gh/.gemini/settings.json", "qwen": "/qh/settings.json",
		"copilot": "/ch/mcp-config.json", "crush": "/crush/crush.json", "opencode": "/oc/my.json",
		"continue": "/cont/config.yaml"} {
		h, _ := Lookup(host)
		if files := h.Files(ew); !slices.Contains(files, want) {
			t.Errorf("%s with its variable set: %v, want %s among them", host, files, want)
		}
	}
	claude, _ := Lookup("claude-code")
	codex, _ := Lookup("codex")
	if a, b := claude.Files(w)[0], codex.Files(w)[0]; a != "/cc/.claude.json" || b != "/cx/config.toml" {
		t.Errorf("CLAUDE_CONFIG_DIR, CODEX_HOME: %s %s", a, b)
	}
}

// A host adds a server after protect; protect again bridges it too; restore
// cannot copy the backup (it lacks the new server) and puts back both
// entries instead.
func TestProtectAgainAfterHostAddedAServer(t *testing.T) {
	h, _ := Lookup("gemini")
	w, project, store := testWorld(t)
	path, _ := install(t, h, w, "gemini.json", project)
	o := Options{World: w, Store: store, Executable: fakeExe}
	if _, err := Protect(h, o); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	added := bytes.Replace(data, []byte(`"mcpServers": {`), []byte(`"mcpServers": {
    "late": {"command": "late-mcp", "args": ["--x"]},`), 1)
	os.WriteFile(path, added, 0o600)
	res, err := Protect(h, o)
	if err != nil || len(res[0].Changes) != 1 || res[0].Changes[0].Entry.Name != "late" || res[0].Already != 2 {
		t.Fatalf("second protect: %+v %v", res, err)
	}
	rr, err := Restore(h, o)
	if err != nil || rr[0].How != "entries" || len(rr[0].Kept) != 0 {
		t.Fatalf("restore: %+v %v", rr, err)
	}
	back, _ := os.ReadFile(path)
	d, err := parseDoc(JSON, path, "", back)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entriesOf(h, d) {
		if e.Protected {
			t.Errorf("%s still bridged:\n%s", e.Name, back)
		}
	}
	if late, _ := d.get([]string{"mcpServers", "late"}); string(late) != `{"command": "late-mcp", "args": ["--x"]}` {
		t.Errorf("late entry back as %s", late)
	}
	want := bytes.Replace(mustRead(t, filepath.Join("testdata", "gemini.json")), []byte(`"mcpServers": {`), []byte(`"mcpServers": {
    "late": {"command": "late-mcp", "args": ["--x"]},`), 1)
	if !bytes.Equal(back, want) {
		t.Errorf("restore:\n%s\nwant\n%s", back, want)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestTransportsByHost(t *testing.T) {
	for _, c := range []struct{ host, entry, want string }{
		{"gemini", `{"url": "https://x.example/sse"}`, app.TransportSSE},
		{"gemini", `{"httpUrl": "https://x.example/mcp"}`, app.TransportHTTP},
		{"cursor", `{"url": "https://x.example/mcp"}`, app.TransportHTTP},
		{"claude-code", `{"type": "sse", "url": "https://x.example/sse"}`, app.TransportSSE},
		{"windsurf", `{"serverUrl": "https://x.example/mcp"}`, app.TransportHTTP},
		{"zed", `{"url": "https://x.example/mcp"}`, app.TransportHTTP},
	} {
		h, _ := Lookup(c.host)
		d, err := parseJSON("/x", "", []byte(`{"s": `+c.entry+`}`))
		if err != nil {
			t.Fatal(err)
		}
		e := readEntry(h, d, serverTable{}, "s")
		if e.Server.Type != c.want || e.Skip != "" {
			t.Errorf("%s %s: %q (skip %q), want %s", c.host, c.entry, e.Server.Type, e.Skip, c.want)
		}
	}
}

// TestVSCodeProfiles: a profile's mcp.json is found, protected under the
// profile's scope and restored byte for byte.
func TestVSCodeProfiles(t *testing.T) {
	h, _ := Lookup("vscode")
	w, _, store := testWorld(t)
	data := mustRead(t, filepath.Join("testdata", "vscode.json"))
	path := filepath.Join(w.XDGConfigHome, "Code", "User", "profiles", "-4a5b6c", "mcp.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, data, 0o600)
	o := Options{World: w, Store: store, Executable: fakeExe}
	list, err := List(o)
	if err != nil || len(list) != 1 || len(list[0].Files) != 1 || list[0].Files[0].Path != path {
		t.Fatalf("list: %+v %v", list, err)
	}
	e := list[0].Files[0].Entries[0]
	if e.Scope != "profile -4a5b6c" || e.Rootkeeper != "vscode.profile-4a5b6c.memory" {
		t.Errorf("profile entry: %s %s", e.Scope, e.Rootkeeper)
	}
	if res, err := Protect(h, o); err != nil || len(res) != 1 || len(res[0].Changes) != 1 {
		t.Fatalf("protect: %+v %v", res, err)
	}
	if _, err := Restore(h, o); err != nil {
		t.Fatal(err)
	}
	if back := mustRead(t, path); !bytes.Equal(back, data) {
		t.Errorf("not restored byte for byte:\n%s", back)
	}
}

// TestContinueListItems: Continue's servers are a YAML list; a server whose
// first key is edited keeps its "- ", and an entry-by-entry restore puts
// back a first key that protect removed.
func TestContinueListItems(t *testing.T) {
	h, _ := Lookup("continue")
	w, _, store := testWorld(t)
	path := h.Files(w)[0]
	os.MkdirAll(filepath.Dir(path), 0o755)
	orig := []byte("mcpServers:\n  - url: https://a.example.com/mcp # remote\n    type: streamable-http\n    name: a\n  - command: uvx\n    name: b\n")
	os.WriteFile(path, orig, 0o600)
	o := Options{World: w, Store: store, Executable: fakeExe}
	if _, err := Protect(h, o); err != nil {
		t.Fatal(err)
	}
	got := mustRead(t, path)
	d, err := parseDoc(YAML, path, "", got)
	if err != nil {
		t.Fatalf("protected file does not parse: %v\n%s", err, got)
	}
	for i, name := range []string{"a", "b"} {
		e := readEntry(h, d, serverTable{key: []string{"mcpServers"}}, strconv.Itoa(i))
		if !e.Protected || e.Name != name || e.Rootkeeper != "continue."+name {
			t.Errorf("item %d: %+v\n%s", i, e, got)
		}
	}
	// Edited since: restore goes entry by entry.
	os.WriteFile(path, append(got, "# edited\n"...), 0o600)
	if _, err := Restore(h, o); err != nil {
		t.Fatal(err)
	}
	if back, want := mustRead(t, path), append(bytes.Clone(orig), "# edited\n"...); !bytes.Equal(back, want) {
		t.Errorf("restore:\n%s\nwant\n%s", back, want)
	}
}

// Continue's block files in a project: YAML with an mcpServers list, and
// JSON in Claude Desktop's shape, side by side.
func TestContinueBlockFiles(t *testing.T) {
	h, _ := Lookup("continue")
	w, project, store := testWorld(t)
	dir := filepath.Join(project, ".continue", "mcpServers")
	os.MkdirAll(dir, 0o755)
	files := map[string][]byte{
		filepath.Join(dir, "sqlite.yaml"):      []byte("name: SQLite block\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: sqlite\n    command: npx\n    args: [\"-y\", \"mcp-sqlite\"]\n"),
		filepath.Join(dir, "from-cursor.json"): []byte("{\n  \"mcpServers\": {\n    \"time\": { \"command\": \"uvx\", \"args\": [\"mcp-server-time\"] }\n  }\n}\n"),
	}
	for p, data := range files {
		os.WriteFile(p, data, 0o600)
	}
	o := Options{World: w, Store: store, Executable: fakeExe, Projects: []string{project}}
	res, err := Protect(h, o)
	if err != nil {
		t.Fatal(err)
	}
	var bridged []string
	for _, r := range res {
		for _, ch := range r.Changes {
			bridged = append(bridged, ch.Entry.Rootkeeper)
		}
	}
	sort.Strings(bridged)
	tag := baseTag(project)
	if d := cmp.Diff([]string{"continue." + tag + ".sqlite", "continue." + tag + ".time"}, bridged); d != "" {
		t.Errorf("bridged (-want +got):\n%s", d)
	}
	for p := range files {
		if !bytes.Contains(mustRead(t, p), []byte(fakeExe)) {
			t.Errorf("%s not protected", p)
		}
	}
	if _, err := Restore(h, o); err != nil {
		t.Fatal(err)
	}
	for p, data := range files {
		if back := mustRead(t, p); !bytes.Equal(back, data) {
			t.Errorf("%s not restored:\n%s", p, back)
		}
	}
}

// A root that is the home folder: its "project" files that are the hosts'
// own user files are read once, as user files.
func TestHomeAsAProject(t *testing.T) {
	h, _ := Lookup("gemini")
	w, _, store := testWorld(t)
	path, _ := install(t, h, w, "gemini.json", "/p")
	found, err := List(Options{World: w, Store: store, Projects: []string{w.Home}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		if f.ID != "gemini" {
			continue
		}
		if len(f.Files) != 1 || f.Files[0].Path != path || f.Files[0].Project {
			t.Errorf("gemini's files: %+v", f.Files)
		}
	}
}

// A project's config file that is a link to a file outside the project (an
// untrusted repository's .mcp.json pointing at ~/.cursor/mcp.json) is left
// as it is: protect never edits through it, and says why.
func TestProjectLinkOutsideTheProjectIsLeftAlone(t *testing.T) {
	w, project, store := testWorld(t)
	target := filepath.Join(w.Home, ".cursor", "mcp.json")
	data := []byte(`{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "server"]}}}`)
	os.MkdirAll(filepath.Dir(target), 0o755)
	if err := os.WriteFile(target, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(project, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	h, _ := Lookup("claude-code")
	res, err := Protect(h, Options{World: w, Store: store, Executable: fakeExe, Projects: []string{project}})
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(target); !bytes.Equal(after, data) {
		t.Errorf("protect edited the file outside the project through the link:\n%s", after)
	}
	var said string
	for _, r := range res {
		said += r.Refused
	}
	if !strings.Contains(said, "outside the project") {
		t.Errorf("protect did not say why it left the link: %+v", res)
	}
}

// whole is the meaning of a whole document.
func whole(d doc) map[string]any {
	v, _ := d.value(nil)
	m, _ := v.(map[string]any)
	return m
}
