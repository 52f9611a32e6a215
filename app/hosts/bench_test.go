package hosts

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rootkeeper/app"
)

// bigClaudeJSON is a ~/.claude.json of a heavy user: many projects with
// their histories, ten servers.
func bigClaudeJSON(b *testing.B) []byte {
	projects := map[string]any{}
	for i := range 400 {
		var history []any
		for j := range 40 {
			history = append(history, map[string]any{"display": strings.Repeat(fmt.Sprintf("prompt %d ", j), 20), "pastedContents": map[string]any{}})
		}
		projects[fmt.Sprintf("/home/ada/src/p%03d", i)] = map[string]any{"allowedTools": []string{}, "history": history, "mcpServers": map[string]any{}}
	}
	servers := map[string]any{}
	for i := range 10 {
		servers[fmt.Sprintf("s%d", i)] = map[string]any{"type": "stdio", "command": "npx", "args": []string{"-y", fmt.Sprintf("pkg-%d", i)}, "env": map[string]string{}}
	}
	data, err := json.MarshalIndent(map[string]any{"numStartups": 9, "mcpServers": servers, "projects": projects}, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkProtectBigClaudeJSON protects (and restores) every server of a
// big ~/.claude.json; the anchor, BenchmarkReadBigClaudeJSON, is reading
// and decoding that file once with encoding/json.
func BenchmarkProtectBigClaudeJSON(b *testing.B) {
	data := bigClaudeJSON(b)
	b.SetBytes(int64(len(data)))
	home := b.TempDir()
	store, err := app.OpenStore(filepath.Join(b.TempDir(), "state"))
	if err != nil {
		b.Fatal(err)
	}
	h, _ := Lookup("claude-code")
	o := Options{World: World{GOOS: "linux", Home: home}, Store: store, Executable: fakeExe}
	path := filepath.Join(home, ".claude.json")
	for b.Loop() {
		os.WriteFile(path, data, 0o600)
		res, err := Protect(h, o)
		if err != nil || len(res[0].Changes) != 10 {
			b.Fatalf("%+v %v", res, err)
		}
		if _, err := Restore(h, o); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadBigClaudeJSON(b *testing.B) {
	data := bigClaudeJSON(b)
	b.SetBytes(int64(len(data)))
	path := filepath.Join(b.TempDir(), ".claude.json")
	os.WriteFile(path, data, 0o600)
	for b.Loop() {
		raw, _ := os.ReadFile(path)
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListTwoHundredProjects is `hosts list` over a home with a
// config for every host and 200 known projects, half of them with project
// files (goal: well under 0.5 s).
func BenchmarkListTwoHundredProjects(b *testing.B) {
	home := b.TempDir()
	w := World{GOOS: "linux", Home: home, XDGConfigHome: filepath.Join(home, ".config")}
	store, err := app.OpenStore(filepath.Join(b.TempDir(), "state"))
	if err != nil {
		b.Fatal(err)
	}
	for _, fx := range fixtures {
		h, _ := Lookup(fx.host)
		data, err := os.ReadFile(filepath.Join("testdata", fx.file))
		if err != nil {
			b.Fatal(err)
		}
		p := h.Files(w)[0]
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, data, 0o600)
	}
	var projects []string
	for i := range 200 {
		dir := filepath.Join(home, "src", fmt.Sprintf("p%03d", i))
		os.MkdirAll(filepath.Join(dir, ".vscode"), 0o755)
		if i%2 == 0 {
			os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers": {"db": {"command": "db-mcp", "args": ["--dir", "."]}}}`), 0o600)
			os.WriteFile(filepath.Join(dir, ".vscode", "mcp.json"), []byte(`{"servers": {"x": {"type": "stdio", "command": "x"}}}`), 0o600)
		}
		projects = append(projects, dir)
	}
	o := Options{World: w, Store: store, Projects: projects}
	for b.Loop() {
		found, err := List(o)
		if err != nil || len(found) < 24 {
			b.Fatalf("%d hosts, %v", len(found), err)
		}
	}
}

// manyServersJSON is a project's .mcp.json of n servers, which anyone can
// write into a repository.
func manyServersJSON(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"mcpServers": {`)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `"s%d": {"command": "x", "args": ["--port", "%d"]}`, i, i)
	}
	b.WriteString("}}\n")
	return []byte(b.String())
}

// BenchmarkListManyServers is `hosts list` of a project whose .mcp.json
// holds 20000 servers; the anchor, BenchmarkDecodeManyServers, decodes that
// file once with encoding/json. Each entry used to be found by a scan of
// its table (and a decode of the whole table): time in the square of the
// file's size.
func BenchmarkListManyServers(b *testing.B) {
	data := manyServersJSON(20000)
	b.SetBytes(int64(len(data)))
	home := b.TempDir()
	project := filepath.Join(home, "p")
	os.MkdirAll(project, 0o755)
	os.WriteFile(filepath.Join(project, ".mcp.json"), data, 0o600)
	store, err := app.OpenStore(filepath.Join(b.TempDir(), "state"))
	if err != nil {
		b.Fatal(err)
	}
	o := Options{World: World{GOOS: "linux", Home: home}, Store: store, Projects: []string{project}}
	for b.Loop() {
		found, err := List(o)
		if err != nil || len(found) != 1 || len(found[0].Files[0].Entries) != 20000 {
			b.Fatalf("%+v %v", found, err)
		}
	}
}

func BenchmarkDecodeManyServers(b *testing.B) {
	data := manyServersJSON(20000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var v map[string]any
		if err := json.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}
