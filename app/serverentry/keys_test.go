package serverentry

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// readers are the dialects an entry can be read in: a paste's (also
// `rootkeeper import`'s) and each host dialect's.
var readers = map[string]Dialect{
	"paste": Pasted, "common": Common, "gemini": Gemini, "zed": Zed, "codex": Codex,
	"opencode": Opencode, "copilot": Copilot, "goose": Goose,
}

// keyCase is one entry and what each reader makes of it (see describe);
// "*" stands for every reader not named. An expectation "error: …" or
// "skip: …" matches an error or a skip whose text holds the rest.
type keyCase struct {
	name  string
	entry string
	want  map[string]string
}

// keyCases map every key each reader accepts. Before one reader of
// entries, a paste (app/importcfg.go) and the hosts (app/hosts/entry.go)
// each had their own; each case's name says what they did with it, and
// where they disagreed, how that is settled.
var keyCases = []keyCase{
	{"command and args: every reader but Goose (cmd) and opencode (a command array; it has no args key and ignores one)",
		`{"command": "x", "args": ["a"]}`,
		map[string]string{"*": "stdio x a", "opencode": "stdio x", "goose": "error: neither"}},
	{"httpUrl (Gemini CLI): a paste refused it, hosts read it as streamable HTTP: now a paste does too",
		`{"httpUrl": "https://h/mcp"}`,
		map[string]string{"*": "error: neither", "paste": "http https://h/mcp", "common": "http https://h/mcp", "gemini": "http https://h/mcp"}},
	{"serverUrl (Windsurf): streamable HTTP, for a paste and the common dialect",
		`{"serverUrl": "https://h/mcp"}`,
		map[string]string{"*": "error: neither", "paste": "http https://h/mcp", "common": "http https://h/mcp"}},
	{"url with type sse",
		`{"type": "sse", "url": "https://h/sse"}`,
		map[string]string{"*": "sse https://h/sse", "opencode": `skip: type "sse"`, "goose": "error: neither"}},
	{"url without a type: streamable HTTP, but SSE in Gemini CLI's files (a paste cannot know the host; a type says it)",
		`{"url": "https://h/mcp"}`,
		map[string]string{"*": "http https://h/mcp", "gemini": "sse https://h/mcp", "goose": "error: neither"}},
	{"opencode's type local with a command array: a paste refused it, now reads it",
		`{"type": "local", "command": ["x", "a"]}`,
		map[string]string{"paste": "stdio x a", "opencode": "stdio x a", "common": `skip: type "local"`, "gemini": `skip: type "local"`,
			"goose": `skip: type "local"`, "zed": `error: "command" is an array`, "codex": `error: "command" is an array`, "copilot": `error: "command" is an array`}},
	{"Copilot CLI's type local with command and args: a paste refused the type, now reads it",
		`{"type": "local", "command": "x", "args": ["a"]}`,
		map[string]string{"paste": "stdio x a", "copilot": "stdio x a", "zed": "stdio x a", "codex": "stdio x a", "opencode": "stdio x",
			"common": `skip: type "local"`, "gemini": `skip: type "local"`, "goose": `skip: type "local"`}},
	{"opencode's type remote: a paste refused it, now reads it",
		`{"type": "remote", "url": "https://h/mcp"}`,
		map[string]string{"*": `skip: type "remote"`, "paste": "http https://h/mcp", "opencode": "http https://h/mcp", "zed": "http https://h/mcp", "codex": "http https://h/mcp"}},
	{"Goose's cmd, envs and type stdio: a paste found no command, now reads them",
		`{"cmd": "x", "args": ["a"], "envs": {"K": "v"}, "type": "stdio"}`,
		map[string]string{"*": "error: neither", "paste": "stdio x a env K=v", "goose": "stdio x a env K=v", "opencode": `skip: type "stdio"`}},
	{"Goose's uri with type sse: a paste found no url, now reads it",
		`{"uri": "https://h/sse", "type": "sse"}`,
		map[string]string{"*": "error: neither", "paste": "sse https://h/sse", "goose": "sse https://h/sse", "opencode": `skip: type "sse"`}},
	{"Goose's type streamable_http with uri",
		`{"uri": "https://h/mcp", "type": "streamable_http"}`,
		map[string]string{"*": "error: neither", "paste": "http https://h/mcp", "goose": "http https://h/mcp", "opencode": `skip: type "streamable_http"`, "copilot": `skip: type "streamable_http"`}},
	{"Zed's older command object: a paste refused it, now reads it; hosts without it said neither a command nor a url, now that command is not a string",
		`{"command": {"path": "x", "args": ["a"], "env": {"K": "v"}}}`,
		map[string]string{"*": `error: "command" is an object`, "paste": "stdio x a env K=v", "zed": "stdio x a env K=v", "goose": "error: neither"}},
	{"Zed's older command object: the entry's own keys (enabled) stay outside it",
		`{"command": {"path": "x"}, "enabled": false, "rootsMode": "off"}`,
		map[string]string{"paste": "stdio x off rootsMode=off", "zed": "stdio x off"}},
	{"opencode's environment: a paste ignored it, now reads it",
		`{"command": "x", "environment": {"K": "v"}}`,
		map[string]string{"*": "stdio x", "paste": "stdio x env K=v", "opencode": "stdio x env K=v", "goose": "error: neither"}},
	{"transport, a paste's other name for type: hosts do not read it",
		`{"transport": "sse", "url": "https://h/sse"}`,
		map[string]string{"*": "http https://h/sse", "paste": "sse https://h/sse", "gemini": "sse https://h/sse", "goose": "error: neither"}},
	{"a key in another case: a paste read it (encoding/json matches any case), hosts did not; now refused by every reader of that key",
		`{"Command": "x"}`,
		map[string]string{"*": "error: another case", "goose": "error: neither"}},
	{"a key in two cases: a paste read the last, hosts the exact one; now refused",
		`{"command": "x", "COMMAND": "y"}`,
		map[string]string{"*": "error: another case", "goose": "error: neither"}},
	{"a key given twice: both read the last; now refused, as the bridge refuses it",
		`{"command": "x", "command": "y"}`,
		map[string]string{"*": "error: given twice", "goose": "error: neither"}},
	{"Unicode folding (ſ is s to encoding/json): refused",
		`{"command": "x", "argſ": ["/"]}`,
		map[string]string{"*": "error: another case", "opencode": "stdio x"}},
	{"numbers and booleans in args: hosts passed their text, a paste refused them; now their JSON text",
		`{"command": "x", "args": [8080, true, 1e3]}`,
		map[string]string{"*": "stdio x 8080 true 1e3", "opencode": "stdio x", "goose": "error: neither"}},
	{"env: a null is left out (VS Code unsets it), a number is its text; hosts wrote <nil>, a paste refused both",
		`{"command": "x", "env": {"K": null, "N": 1}}`,
		map[string]string{"*": "stdio x env N=1", "opencode": "stdio x", "goose": "error: neither"}},
	{"disabled true: Off (a paste skipped it, hosts ignored it; protect still bridges it)",
		`{"command": "x", "disabled": true}`,
		map[string]string{"*": "stdio x off", "goose": "error: neither"}},
	{"enabled false (opencode, Goose): Off; both ignored it (a paste took the server)",
		`{"command": "x", "enabled": false}`,
		map[string]string{"*": "stdio x off", "goose": "error: neither"}},
	{"rootsMode: Rootkeeper's own key, read from a paste only (a host's entry states none of Rootkeeper's settings)",
		`{"command": "x", "rootsMode": "args"}`,
		map[string]string{"*": "stdio x", "paste": "stdio x rootsMode=args", "goose": "error: neither"}},
	{"a variable only the host expands in args: hosts skipped it, a paste stored it as written; now a skip for all",
		`{"command": "x", "args": ["${workspaceFolder}"]}`,
		map[string]string{"*": "skip: only the host expands", "opencode": "stdio x", "goose": "error: neither"}},
	{"opencode's oauth: the host signs in; a paste took it, now skips it",
		`{"url": "https://h/mcp", "oauth": {}}`,
		map[string]string{"*": "http https://h/mcp", "paste": `skip: "oauth"`, "opencode": `skip: "oauth"`, "gemini": "sse https://h/mcp", "goose": "error: neither"}},
	{"opencode's oauth false turns the host's sign-in off: was skipped, now bridged",
		`{"url": "https://h/mcp", "oauth": false}`,
		map[string]string{"*": "http https://h/mcp", "gemini": "sse https://h/mcp", "goose": "error: neither"}},
	{"Codex's bearer_token_env_var: the host reads the token; a paste took it, now skips it",
		`{"url": "https://h/mcp", "bearer_token_env_var": "T"}`,
		map[string]string{"*": "http https://h/mcp", "paste": `skip: "bearer_token_env_var"`, "codex": `skip: "bearer_token_env_var"`, "gemini": "sse https://h/mcp", "goose": "error: neither"}},
	{"Codex's env_http_headers: the host reads the headers' values",
		`{"url": "https://h/mcp", "env_http_headers": {"A": "B"}}`,
		map[string]string{"*": "http https://h/mcp", "paste": `skip: "env_http_headers"`, "codex": `skip: "env_http_headers"`, "gemini": "sse https://h/mcp", "goose": "error: neither"}},
	{"an entry running rootkeeper bridge: protected; a paste took it as a server (Rootkeeper starting its own bridge)",
		`{"command": "/usr/bin/rootkeeper", "args": ["bridge", "cc.x"]}`,
		map[string]string{"*": "bridges cc.x", "opencode": "stdio /usr/bin/rootkeeper", "goose": "error: neither"}},
	{"opencode's bridge: a command array",
		`{"type": "local", "command": ["/usr/bin/rootkeeper", "--state-dir", "/s", "bridge", "oc.x"]}`,
		map[string]string{"paste": "bridges oc.x", "opencode": "bridges oc.x"}},
	{"headers of a stdio server: a paste kept them, hosts dropped them; dropped by all",
		`{"command": "x", "headers": {"A": "b"}}`,
		map[string]string{"*": "stdio x", "goose": "error: neither"}},
	{"headers of a remote server",
		`{"url": "https://h/mcp", "headers": {"A": "b"}}`,
		map[string]string{"*": "http https://h/mcp headers A=b", "gemini": "sse https://h/mcp headers A=b", "codex": "http https://h/mcp", "goose": "error: neither"}},
	{"Goose's builtin extension: not a server (a paste refused its type)",
		`{"type": "builtin", "name": "developer"}`,
		map[string]string{"*": `skip: type "builtin"`, "zed": "error: neither", "codex": "error: neither"}},
	{"cwd: not Zed's, opencode's nor Goose's",
		`{"command": "x", "cwd": "/tmp"}`,
		map[string]string{"*": "stdio x cwd=/tmp", "zed": "stdio x", "opencode": "stdio x", "goose": "error: neither"}},
	{"Codex's http_headers",
		`{"url": "https://h/mcp", "http_headers": {"A": "b"}}`,
		map[string]string{"*": "http https://h/mcp", "codex": "http https://h/mcp headers A=b", "gemini": "sse https://h/mcp", "goose": "error: neither"}},
	{"type streamableHttp (Cline) and streamable-http: the common types",
		`{"type": "streamableHttp", "url": "https://h/mcp"}`,
		map[string]string{"*": "http https://h/mcp", "opencode": `skip: type "streamableHttp"`, "copilot": `skip: type "streamableHttp"`, "goose": `skip: type "streamableHttp"`}},
	{"type streamable-http",
		`{"type": "streamable-http", "url": "https://h/mcp"}`,
		map[string]string{"*": "http https://h/mcp", "opencode": `skip: type "streamable-http"`, "copilot": `skip: type "streamable-http"`, "goose": `skip: type "streamable-http"`}},
	{"type streamable_http (Goose's spelling, common to all)",
		`{"type": "streamable_http", "url": "https://h/mcp"}`,
		map[string]string{"*": "http https://h/mcp", "opencode": `skip: type "streamable_http"`, "copilot": `skip: type "streamable_http"`, "goose": "error: neither"}},
	{"Goose: enabled false",
		`{"cmd": "x", "enabled": false}`,
		map[string]string{"paste": "stdio x off", "goose": "stdio x off", "common": "error: neither"}},
	{"Goose: a remote extension's headers, disabled",
		`{"uri": "https://h/mcp", "type": "streamable_http", "headers": {"A": "b"}, "disabled": true}`,
		map[string]string{"paste": "http https://h/mcp headers A=b off", "goose": "http https://h/mcp headers A=b off", "common": "error: neither"}},
	{"type http",
		`{"type": "http", "url": "https://h/mcp"}`,
		map[string]string{"*": "http https://h/mcp", "opencode": `skip: type "http"`, "goose": `skip: type "http"`}},
	{"a type saying remote with a command: the command is run, as hosts read it; a paste refused it (no url)",
		`{"type": "http", "command": "x"}`,
		map[string]string{"*": "stdio x", "opencode": `skip: type "http"`, "goose": `skip: type "http"`}},
	{"type stdio with a url: a remote server, its URL key's transport",
		`{"type": "stdio", "url": "https://h/mcp"}`,
		map[string]string{"*": "http https://h/mcp", "gemini": "sse https://h/mcp", "opencode": `skip: type "stdio"`, "goose": "error: neither"}},
	{"an unknown type: a paste refused it, hosts skipped it; now a skip for all",
		`{"type": "websocket", "url": "wss://h/mcp"}`,
		map[string]string{"*": `skip: type "websocket"`, "zed": "error: invalid url", "codex": "error: invalid url"}},
	{"a type that is not a string: malformed (hosts skipped it, a paste refused it)",
		`{"type": 5, "command": "x"}`,
		map[string]string{"*": `error: "type" is a number`, "zed": "stdio x", "codex": "stdio x"}},
	{"two URL keys: the host's preference; a paste cannot tell which one counts, refused",
		`{"url": "https://h/a", "httpUrl": "https://h/b"}`,
		map[string]string{"*": "http https://h/a", "paste": "error: both", "gemini": "http https://h/b", "goose": "error: neither"}},
	{"a command and a url: malformed",
		`{"command": "x", "url": "https://h/mcp"}`,
		map[string]string{"*": "error: is stdio but has a url", "goose": "error: neither"}},
	{"nothing to run",
		`{}`,
		map[string]string{"*": "error: neither"}},
	{"a command that is not a string: malformed (hosts said neither a command nor a url)",
		`{"command": 5}`,
		map[string]string{"*": `error: "command" is a number`, "goose": "error: neither"}},
	{"env and cwd of a remote server: left out (both kept them)",
		`{"url": "https://h/mcp", "env": {"K": "v"}, "cwd": "/tmp"}`,
		map[string]string{"*": "http https://h/mcp", "gemini": "sse https://h/mcp", "goose": "error: neither"}},
	{"comments and trailing commas (JSONC), through hujson",
		"{\"command\": \"x\", // the program\n \"args\": [\"https://a//b\", /* c */ \"/*\",],}",
		map[string]string{"*": "stdio x https://a//b /*", "opencode": "stdio x", "goose": "error: neither"}},
	{"a paste: env and envs both: refused",
		`{"command": "x", "env": {"K": "v"}, "envs": {"K": "w"}}`,
		map[string]string{"paste": "error: both", "common": "stdio x env K=v", "goose": "error: neither"}},
	{"a paste: command and cmd both: refused",
		`{"command": "x", "cmd": "y"}`,
		map[string]string{"paste": "error: both", "common": "stdio x", "goose": "stdio y"}},
	{"a paste: a command array and args: refused",
		`{"command": ["x", "a"], "args": ["b"]}`,
		map[string]string{"paste": "error: and \"args\" is given too", "opencode": "stdio x a"}},
	{"a header named twice in two cases: refused (which value a server got would depend on order)",
		`{"url": "https://h/mcp", "headers": {"Authorization": "a", "authorization": "b"}}`,
		map[string]string{"paste": "error: twice", "common": "error: twice"}},
}

// describe says what an entry was read as, for keyCases.
func describe(e Entry, err error) string {
	switch {
	case err != nil:
		return "error: " + err.Error()
	case e.Bridges != "":
		return "bridges " + e.Bridges
	case e.Skip != "":
		return "skip: " + e.Skip
	}
	s := e.Server
	var b strings.Builder
	if s.Type == "stdio" {
		b.WriteString(strings.Join(append([]string{"stdio", s.Command}, s.Args...), " "))
	} else {
		b.WriteString(s.Type + " " + s.URL)
	}
	pairs := func(what string, m map[string]string) {
		if len(m) == 0 {
			return
		}
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			kv = append(kv, k+"="+m[k])
		}
		b.WriteString(" " + what + " " + strings.Join(kv, ","))
	}
	pairs("env", s.Env)
	pairs("headers", s.Headers)
	if s.Cwd != "" {
		b.WriteString(" cwd=" + s.Cwd)
	}
	if e.Off {
		b.WriteString(" off")
	}
	if s.RootsMode != "" {
		b.WriteString(" rootsMode=" + string(s.RootsMode))
	}
	return b.String()
}

func matches(got, want string) bool {
	for _, kind := range []string{"error: ", "skip: "} {
		if rest, ok := strings.CutPrefix(want, kind); ok {
			return strings.HasPrefix(got, kind) && strings.Contains(got, rest)
		}
	}
	return got == want
}

func TestKeysOfEveryReader(t *testing.T) {
	for _, c := range keyCases {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range slices.Sorted(maps.Keys(readers)) {
				want, ok := c.want[r]
				if !ok {
					if want, ok = c.want["*"]; !ok {
						continue
					}
				}
				got := describe(Read("s", []byte(c.entry), readers[r]))
				if !matches(got, want) {
					t.Errorf("%s reads %s as %q, want %q", r, c.entry, got, want)
				}
			}
		})
	}
}

// TestEveryKeyIsMapped: each key and type value a reader accepts is in a
// case where that reader makes something of it (not "neither a command nor
// a url"), so that a key added to a dialect comes with its case, and no key
// a reader accepted before one reader of entries is lost.
func TestEveryKeyIsMapped(t *testing.T) {
	for r, d := range readers {
		var keys []string
		keys = append(keys, d.Command, d.Args, d.Env, d.Cwd, d.Headers, d.Type)
		for _, u := range d.URLs {
			keys = append(keys, u.Key)
		}
		keys = append(keys, d.HostOnly...)
		keys = append(keys, "disabled", "enabled")
		if d.Own {
			keys = append(keys, "rootsMode")
		}
		if d.fit {
			for _, a := range aliases {
				keys = append(keys, a...)
			}
		}
		var types []string
		for v := range d.Types {
			if v != "" {
				types = append(types, v)
			}
		}
		covered := func(needle string, caseFold bool) bool {
			for _, c := range keyCases {
				want, ok := c.want[r]
				if !ok {
					want, ok = c.want["*"]
				}
				entry := c.entry
				if caseFold {
					entry = strings.ToLower(entry)
				}
				if ok && strings.Contains(entry, needle) && !strings.HasPrefix(want, "error: neither") && !strings.Contains(want, "another case") {
					return true
				}
			}
			return false
		}
		for _, k := range keys {
			if k != "" && !covered(fmt.Sprintf("%q:", k), false) {
				t.Errorf("%s reads the key %q, but no case shows it", r, k)
			}
		}
		for _, v := range types {
			if !covered(fmt.Sprintf(": %q", v), true) {
				t.Errorf("%s reads the type %q, but no case shows it", r, v)
			}
		}
	}
}
