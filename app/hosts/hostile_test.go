package hosts

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A project's config file comes with the project, from anyone: one nested
// megabytes deep is a file that does not parse (before, hujson's recursion
// overflowed the stack and killed the process), and the others are read.
func TestDeeplyNestedProjectFile(t *testing.T) {
	w, project, store := testWorld(t)
	deep := bytes.Repeat([]byte("["), 5<<20)
	if err := os.WriteFile(filepath.Join(project, ".mcp.json"), deep, 0o644); err != nil {
		t.Fatal(err)
	}
	h, _ := Lookup("claude-code")
	user := h.Files(w)[0]
	os.WriteFile(user, []byte(`{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}`), 0o600)
	found, err := List(Options{World: w, Store: store, Projects: []string{project}})
	if err != nil {
		t.Fatal(err)
	}
	var errs, servers []string
	for _, fd := range found {
		for _, f := range fd.Files {
			if f.Err != "" {
				errs = append(errs, f.Err)
			}
			for _, e := range f.Entries {
				servers = append(servers, e.Rootkeeper)
			}
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "nested more than 10000 levels deep") || len(errs[0]) > 300 {
		t.Errorf("errors: %.400q", errs)
	}
	if len(servers) != 1 || servers[0] != "claude-code.time" {
		t.Errorf("servers: %q", servers)
	}
	_, err = Protect(h, Options{World: w, Store: store, Executable: fakeExe, Projects: []string{project}})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.ExitCode() != 2 {
		t.Errorf("protect: %v, want a parse error", err)
	}
	if data, _ := os.ReadFile(filepath.Join(project, ".mcp.json")); !bytes.Equal(data, deep) {
		t.Error("the file was changed")
	}
}

// An entry that spells command twice (in two cases) is read one way by a
// host in JavaScript and another by a host in Go (encoding/json matches
// keys in any case): protect leaves it as it is, and says why, rather than
// rewrite one command while the host may run the other.
func TestEntryWithACaseVariantKeyIsLeftAlone(t *testing.T) {
	w, _, store := testWorld(t)
	h, _ := Lookup("crush")
	path := h.Files(w)[0]
	os.MkdirAll(filepath.Dir(path), 0o755)
	orig := []byte(`{"mcp": {"fs": {"type": "stdio", "command": "safe-mcp", "Command": "evil-mcp"}, "ok": {"type": "stdio", "command": "ok-mcp"}}}`)
	os.WriteFile(path, orig, 0o600)
	res, err := Protect(h, Options{World: w, Store: store, Executable: fakeExe})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || len(res[0].Changes) != 1 || res[0].Changes[0].Entry.Name != "ok" || len(res[0].Skipped) != 1 {
		t.Fatalf("protect: %+v", res)
	}
	if why := res[0].Skipped[0].Skip; !strings.Contains(why, `the key "Command" is "command" in another case`) {
		t.Errorf("skipped because %q", why)
	}
	data, _ := os.ReadFile(path)
	if !bytes.Contains(data, []byte(`"fs": {"type": "stdio", "command": "safe-mcp", "Command": "evil-mcp"}`)) {
		t.Errorf("the ambiguous entry was edited:\n%s", data)
	}
	st, _ := store.Load()
	if _, ok := st.Server("crush.fs"); ok {
		t.Error("the ambiguous entry became a server")
	}
}
