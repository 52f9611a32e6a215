package hosts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"rootkeeper/app"
	"rootkeeper/app/secrets/spot"
)

// dialect says which keys of a host's server entry hold what.
type dialect struct {
	command, args, env, cwd, headers string
	// urls are the keys that may hold a remote server's URL, each with the
	// transport it means when no type key says otherwise.
	urls []urlKey
	// typ is the key naming the transport ("" when the host has none);
	// stdio is its value for a stdio server.
	typ, stdio string
	// types maps the host's type values to Rootkeeper's transports; a value
	// missing here is a kind of entry that is not a server to bridge
	// (Goose's builtin extensions).
	types map[string]string
	// hostOnly are keys that make the host do something for a remote
	// server that the bridge cannot (read a token from the host's
	// environment): an entry with one is not bridged.
	hostOnly []string
	// legacyCommand: the command may be an object {path, args, env}
	// (Zed's older settings).
	legacyCommand bool
	// commandArray: the command is an array of the program and its
	// arguments, and there is no args key (opencode).
	commandArray bool
}

type urlKey struct{ key, transport string }

var (
	commonTypes = map[string]string{"": "", "stdio": app.TransportStdio, "http": app.TransportHTTP,
		"streamable-http": app.TransportHTTP, "streamablehttp": app.TransportHTTP, "streamable_http": app.TransportHTTP,
		"sse": app.TransportSSE}
	jsonDialect = dialect{command: "command", args: "args", env: "env", cwd: "cwd", headers: "headers",
		urls: []urlKey{{"url", ""}, {"serverUrl", app.TransportHTTP}, {"httpUrl", app.TransportHTTP}},
		typ:  "type", stdio: "stdio", types: commonTypes}
	// Gemini CLI: url is an SSE endpoint, httpUrl a streamable HTTP one.
	geminiDialect = dialect{command: "command", args: "args", env: "env", cwd: "cwd", headers: "headers",
		urls: []urlKey{{"httpUrl", app.TransportHTTP}, {"url", app.TransportSSE}},
		typ:  "type", stdio: "stdio", types: commonTypes}
	zedDialect = dialect{command: "command", args: "args", env: "env", headers: "headers",
		urls: []urlKey{{"url", app.TransportHTTP}}, types: commonTypes, legacyCommand: true}
	codexDialect = dialect{command: "command", args: "args", env: "env", cwd: "cwd", headers: "http_headers",
		urls: []urlKey{{"url", app.TransportHTTP}}, types: commonTypes,
		hostOnly: []string{"bearer_token_env_var", "env_http_headers"}}
	// opencode: {"type": "local", "command": [program, args…],
	// "environment": {…}} or {"type": "remote", "url", "headers"}; its
	// "oauth" makes opencode run the authorization itself.
	opencodeDialect = dialect{command: "command", env: "environment", headers: "headers",
		urls: []urlKey{{"url", app.TransportHTTP}}, typ: "type", stdio: "local",
		types:    map[string]string{"local": app.TransportStdio, "remote": app.TransportHTTP},
		hostOnly: []string{"oauth"}, commandArray: true}
	// GitHub Copilot CLI writes "type": "local" for a stdio server.
	copilotDialect = dialect{command: "command", args: "args", env: "env", cwd: "cwd", headers: "headers",
		urls: []urlKey{{"url", ""}}, typ: "type", stdio: "local",
		types: map[string]string{"": "", "local": app.TransportStdio, "stdio": app.TransportStdio,
			"http": app.TransportHTTP, "sse": app.TransportSSE}}
	gooseDialect = dialect{command: "cmd", args: "args", env: "envs", headers: "headers",
		urls: []urlKey{{"uri", ""}}, typ: "type", stdio: "stdio",
		types: map[string]string{"stdio": app.TransportStdio, "sse": app.TransportSSE, "streamable_http": app.TransportHTTP}}
)

// Entry is one server entry of a host's config file.
type Entry struct {
	// Host is the host's ID.
	Host string `json:"host"`
	// File is the config file holding it.
	File string `json:"file"`
	// Key is the path of keys to the entry inside the file.
	Key []string `json:"key"`
	// Name is the host's name for the server.
	Name string `json:"name"`
	// Scope says where it applies: "user", "local DIR", "project".
	Scope string `json:"scope"`
	// Rootkeeper is the name it has (or would have) in Rootkeeper.
	Rootkeeper string `json:"rootkeeper"`
	// Protected: the entry runs Rootkeeper's bridge.
	Protected bool `json:"protected"`
	// Program says what the entry runs (command line, or transport and
	// URL), for people.
	Program string `json:"program,omitempty"`
	// Skip says why the entry cannot be bridged; empty when it can.
	Skip string `json:"skip,omitempty"`
	// Server is what the entry runs, as Rootkeeper stores it: no
	// environment (that stays in the host's file, where the host expands
	// it) and not yet stripped of folders on its command line.
	Server app.Server `json:"-"`
	// HostEnv is the entry's environment, left in the host's file.
	HostEnv map[string]string `json:"-"`

	base []string // where command, args… live (Key, or Key+"command" for Zed's old shape)
	d    dialect
}

// hostVar matches the variables hosts expand in their configs and the
// bridge cannot: ${VAR}, ${env:X}, ${input:x}, ${workspaceFolder}, $VAR.
var hostVar = regexp.MustCompile(`\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*`)

// HasHostVariable reports whether s uses a variable a host expands.
func HasHostVariable(s string) bool { return hostVar.MatchString(s) }

// readEntry makes sense of the entry at key.
func readEntry(h *Host, d doc, t serverTable, name string) Entry {
	e := Entry{Host: h.ID, File: d.path(), Key: append(slices.Clone(t.key), name), Name: name, Scope: t.scope, d: h.dialect}
	e.base = e.Key
	e.Rootkeeper = rootkeeperName(h.ID, t.tag, name)
	v, _ := d.value(e.Key)
	obj, ok := v.(map[string]any)
	if !ok {
		e.Skip = "not an object"
		return e
	}
	if list, _ := d.value(t.key); list != nil {
		if _, isList := list.([]any); isList {
			// A list of servers (Continue's mcpServers): each names
			// itself.
			if n, ok := obj["name"].(string); ok && n != "" {
				e.Name = n
				e.Rootkeeper = rootkeeperName(h.ID, t.tag, n)
			}
		}
	}
	dl := h.dialect
	if dl.legacyCommand {
		if inner, ok := obj[dl.command].(map[string]any); ok {
			e.base = append(slices.Clone(e.Key), dl.command)
			obj = inner
			dl.command = "path"
		}
	}
	e.d = dl
	str := func(k string) string { s, _ := obj[k].(string); return s }
	srv := app.Server{Name: e.Rootkeeper}
	typ := ""
	if dl.typ != "" {
		raw, present := obj[dl.typ]
		t, isString := raw.(string)
		tt, known := dl.types[strings.ToLower(t)]
		if present && (!isString || !known) {
			e.Skip = fmt.Sprintf("%s %v is not a server Rootkeeper can bridge", dl.typ, raw)
			return e
		}
		typ = tt
	} else if t, ok := obj["type"].(string); ok {
		typ = commonTypes[strings.ToLower(t)]
	}
	srv.Command = str(dl.command)
	if cmd, ok := obj[dl.command].([]any); ok && dl.commandArray && len(cmd) > 0 {
		srv.Command = fmt.Sprint(cmd[0])
		for _, a := range cmd[1:] {
			s, ok := a.(string)
			if !ok {
				s = fmt.Sprint(a)
			}
			srv.Args = append(srv.Args, s)
		}
	}
	for _, u := range dl.urls {
		if s := str(u.key); s != "" {
			srv.URL = s
			if typ == "" || typ == app.TransportStdio {
				typ = u.transport
			}
			break
		}
	}
	switch {
	case srv.Command != "":
		typ = app.TransportStdio
	case srv.URL != "" && typ == "":
		typ = app.TransportHTTP
	}
	srv.Type = typ
	if args, ok := obj[dl.args].([]any); ok && dl.args != "" {
		for _, a := range args {
			s, ok := a.(string)
			if !ok {
				s = fmt.Sprint(a)
			}
			srv.Args = append(srv.Args, s)
		}
	}
	if dl.cwd != "" {
		srv.Cwd = str(dl.cwd)
	}
	e.HostEnv = stringMap(obj[dl.env])
	if typ != app.TransportStdio {
		srv.Headers = stringMap(obj[dl.headers])
	}
	e.Server = srv
	if srv.Type != "" {
		e.Program = app.Program(srv)
	}
	if isRootkeeper(srv.Command) && isBridge(srv.Args) {
		e.Protected = true
		e.Rootkeeper = srv.Args[len(srv.Args)-1]
		return e
	}
	e.Skip = skipReason(srv, obj, dl)
	return e
}

// skipReason says why an entry cannot be bridged, or "".
func skipReason(srv app.Server, obj map[string]any, dl dialect) string {
	if srv.Command == "" && srv.URL == "" {
		return "neither a command nor a url"
	}
	for _, k := range dl.hostOnly {
		if _, ok := obj[k]; ok {
			return fmt.Sprintf("%q is read by the host, which the bridge cannot do", k)
		}
	}
	// The bridge runs the command as Rootkeeper stores it: a variable only
	// the host expands would reach the server unexpanded. Such variables
	// may stay in env, which the host keeps expanding.
	// What is quoted is shown as `hosts list` shows it: its secrets hidden.
	names := slices.Sorted(maps.Keys(srv.Headers))
	raw := append([]string{srv.Command, srv.Cwd, srv.URL}, srv.Args...)
	shown := append([]string{srv.Command, srv.Cwd, spot.ShowURL(srv.Name, srv.URL)}, spot.ShowArgs(srv.Name, srv.Args)...)
	hidden := spot.ShowHeaders(srv.Name, srv.Headers)
	for _, n := range names {
		raw, shown = append(raw, srv.Headers[n]), append(shown, hidden[n])
	}
	for i, s := range raw {
		if HasHostVariable(s) {
			return fmt.Sprintf("%q uses a variable only the host expands", shown[i])
		}
	}
	probe := srv
	if probe.Type == "" {
		probe.Type = app.TransportStdio
	}
	if err := app.ValidateServer(probe); err != nil {
		return err.Error()
	}
	return ""
}

// isRootkeeper reports whether command is a rootkeeper program (another
// tool may well have a "bridge" verb).
func isRootkeeper(command string) bool {
	base := strings.TrimSuffix(filepath.Base(filepath.FromSlash(strings.ReplaceAll(command, `\`, "/"))), ".exe")
	return base == "rootkeeper"
}

// isBridge reports whether args are a rootkeeper bridge invocation.
func isBridge(args []string) bool {
	n := len(args)
	return n >= 2 && args[n-2] == "bridge" && (n == 2 || n == 4 && args[0] == "--state-dir")
}

func stringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		} else {
			out[k] = fmt.Sprint(v)
		}
	}
	return out
}

func dig(v any, key []string) (any, bool) {
	for _, k := range key {
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[k]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(c) || strconv.Itoa(i) != k {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// rootkeeperName names a host's server in Rootkeeper: host, scope tag and
// the host's name, joined by dots, in the characters server names allow.
// Names of different hosts and scopes cannot collide: the host ID and the
// tag (a project's folder name plus a hash of its path) tell them apart.
func rootkeeperName(host, tag, name string) string {
	parts := []string{host}
	if tag != "" {
		parts = append(parts, tag)
	}
	clean := nameSafe(name)
	if clean != name {
		// Two names that clean to the same text must not become one.
		clean += "-" + shortHash(name)
	}
	n := strings.Join(append(parts, clean), ".")
	if len(n) > 64 {
		n = n[:55] + "-" + shortHash(n)
	}
	return n
}

func nameSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.TrimLeft(b.String(), "-.")
	if out == "" {
		out = "server"
	}
	return out
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:3])
}

// baseTag is the tag of a project folder: its name and a short hash of its
// path, so two projects both called "api" stay apart.
func baseTag(dir string) string {
	b := filepath.Base(filepath.Clean(dir))
	if len(b) > 20 {
		b = b[:20]
	}
	return nameSafe(b) + "-" + shortHash(filepath.Clean(dir))
}
