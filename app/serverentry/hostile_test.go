package serverentry

import (
	"errors"
	"strings"
	"testing"

	"rootkeeper/app"
)

// TestHostileConfigs: what a stranger's config file or a careless paste
// can hold gets a clear one-line error naming what is wrong, short however
// long the input, and never takes the process down.
func TestHostileConfigs(t *testing.T) {
	huge := strings.Repeat("a", 10<<20)
	entry := func(e string) string { return `{"mcpServers": {"x": ` + e + `}}` }
	for _, c := range []struct{ name, config, want string }{
		// hujson parses by recursion: without the depth check this one
		// overflows the goroutine stack, a fatal error no recover stops.
		{"nested 5 MiB deep", strings.Repeat("[", 5<<20), "line 1: nested more than 10000 levels deep"},
		{"nested deep inside an entry", entry(`{"command": "x", "args": ` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`),
			"nested more than 10000"},
		{"nested deep as a fragment", `"x": ` + strings.Repeat("{", 1<<20), "nested more than 10000"},
		{"a huge argument", entry(`{"command": "x", "args": ["` + huge + `"]}`), `server "x": "args"[0] is 10485760 bytes long (at most 131072`},
		{"a huge command", entry(`{"command": "` + huge + `"}`), `"command" is 10485760 bytes long`},
		{"a huge environment value", entry(`{"command": "x", "env": {"K": "` + huge + `"}}`), `"env" "K" is 10485760 bytes long`},
		{"a huge header name", entry(`{"url": "https://h/mcp", "headers": {"` + huge + `": "v"}}`), `"headers" "aaaa`},
		{"a huge URL", entry(`{"url": "https://h/` + huge + `"}`), `"url" is 10485770 bytes long`},
		{"a huge server name", `{"mcpServers": {"` + huge + `": {"command": "x"}}}`, "bytes long (at most 64)"},
		{"a key in another case", entry(`{"command": "safe", "Command": "evil"}`), `server "x": the key "Command" is "command" in another case`},
		{"a key in another case alone", entry(`{"COMMAND": "evil"}`), `the key "COMMAND" is "command" in another case`},
		{"a key spelled with ſ, which encoding/json reads as s", entry(`{"url": "https://h/a", "ſerverUrl": "https://h/b"}`), `"ſerverUrl" is "serverUrl" in another case`},
		{"a key given twice", entry(`{"command": "safe", "command": "evil"}`), `the key "command" is given twice`},
		{"a type in another case", entry(`{"type": "stdio", "TYPE": "sse", "command": "x"}`), `"TYPE" is "type" in another case`},
		{"a header in two cases", entry(`{"url": "https://h/mcp", "headers": {"Authorization": "a", "AUTHORIZATION": "b"}}`), `names the header "Authorization" twice`},
		{"a control character in a name", `{"mcpServers": {"a\u202eb": {"command": "x"}}}`, "invalid server name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.config))
			var ie *app.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v, want an input error", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) || strings.ContainsAny(msg, "\n\r") || len(msg) > 300 {
				t.Errorf("error %.400q (%d bytes), want one short line with %q", msg, len(msg), c.want)
			}
		})
	}
}

// Brackets in strings and comments are no nesting: a long run of them
// there is read as it is.
func TestBracketsInStringsAndComments(t *testing.T) {
	deep := strings.Repeat("[", 20000)
	cfg, err := Parse([]byte(`{"mcpServers": {"x": {"command": "x", /* ` + deep + ` */ "args": ["` + deep + `", "\"` + deep + `"]}}} // ` + deep))
	if err != nil {
		t.Fatal(err)
	}
	if args := cfg.Servers[0].Args; len(args) != 2 || args[0] != deep || args[1] != `"`+deep {
		t.Errorf("args %.80q", args)
	}
}

// A host's file is read entry by entry: a hostile entry is a skip reason
// there (Read's error), the same words as a paste's error.
func TestHostileEntryRead(t *testing.T) {
	_, err := Read("cursor.x", []byte(`{"command": "safe", "Command": "evil"}`), Common)
	if err == nil || !strings.Contains(err.Error(), `"Command" is "command" in another case`) {
		t.Errorf("read: %v", err)
	}
	_, err = Read("x", []byte(strings.Repeat("[", 1<<20)), Common)
	if err == nil || !strings.Contains(err.Error(), "nested more than") {
		t.Errorf("read: %v", err)
	}
}
