package hosts

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// fuzzFormat feeds garbage (seeded with the fixtures) to a format's parser
// and, when it parses, to protect's editing: no panic; a failure is a
// ParseError (exit 2); the input itself is never changed; what protect
// makes of a file that parsed parses again.
func fuzzFormat(f *testing.F, format Format, seeds ...string) {
	for _, s := range seeds {
		data, err := os.ReadFile(filepath.Join("testdata", s))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{})
	f.Add([]byte("{"))
	f.Add([]byte("[mcp_servers.x]\ncommand = \"a\"\n[mcp_servers.x.env]\nA = \"/\"\n"))
	f.Add([]byte("extensions:\n  x: {cmd: a, type: stdio}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		_, err := parseDoc(format, "/nonexistent/config", "", data)
		if !bytes.Equal(in, data) {
			t.Fatal("the parser changed its input")
		}
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.ExitCode() != 2 {
				t.Fatalf("error %v is not a ParseError", err)
			}
			return
		}
		o := Options{Executable: fakeExe, World: World{GOOS: "linux", Home: "/nonexistent"}}
		for _, h := range Hosts {
			if h.Format != format {
				continue
			}
			hd, err := parseDoc(format, "/nonexistent/config", "", data)
			if err != nil {
				t.Fatalf("parsed once, not twice: %v", err)
			}
			for _, e := range entriesOf(h, hd) {
				if e.Protected || e.Skip != "" {
					continue
				}
				if _, err := hd.render(append(clone(e.base), e.d.Command), ""); err != nil {
					continue
				}
				if _, _, err := bridgeEntry(hd, e, o); err != nil {
					continue // refused, as protect would report it
				}
			}
			if _, err := parseDoc(format, "/nonexistent/config", "", hd.bytes()); err != nil {
				t.Fatalf("%s: protect made a file that does not parse: %v\n%q\n->\n%q", h.ID, err, data, hd.bytes())
			}
		}
	})
}

func FuzzJSON(f *testing.F) {
	fuzzFormat(f, JSON, "claude.json", "vscode.json", "zed.json", "gemini.json", "windsurf.json", "opencode.jsonc", "copilot.json", "amp.json")
}

func FuzzTOML(f *testing.F) { fuzzFormat(f, TOML, "codex.toml") }

func FuzzYAML(f *testing.F) { fuzzFormat(f, YAML, "goose.yaml", "continue.yaml") }
