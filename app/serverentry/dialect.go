package serverentry

import "rootkeeper/app"

// Dialect says which keys of a server entry hold what, in one host's files.
// A key left empty is one the host does not have.
type Dialect struct {
	// Command, Args, Env, Cwd and Headers are the keys of the program, its
	// arguments, its environment, its working folder and a remote
	// server's HTTP headers.
	Command, Args, Env, Cwd, Headers string
	// URLs are the keys that may hold a remote server's URL, in the host's
	// order of preference.
	URLs []URLKey
	// Type is the key naming the transport. A host without one ("") may
	// still find a "type" in an entry: it is read with CommonTypes.
	Type string
	// Stdio is the Type value of a stdio server (what protect writes).
	Stdio string
	// Types maps the host's type values, in lower case, to Rootkeeper's
	// transports ("" for none given); a value missing here is a kind of
	// entry that is not a server Rootkeeper can start (Goose's builtin
	// extensions).
	Types map[string]string
	// HostOnly are keys that have the host do something for a server that
	// Rootkeeper cannot do in its place (sign in with OAuth, read a token
	// from the host's environment): an entry with one (not false or null)
	// is left to the host.
	HostOnly []string
	// LegacyCommand: the command may be an object {path, args, env}
	// (Zed's older settings).
	LegacyCommand bool
	// CommandArray: the command may be an array of the program and its
	// arguments (opencode, which has no args key).
	CommandArray bool
	// Own: the entry may state Rootkeeper's own settings (rootsMode). A
	// paste or an import hands Rootkeeper its own format; a host's entry
	// states none of Rootkeeper's settings.
	Own bool

	// fit: the keys are chosen per entry, from those it uses (Pasted).
	fit bool
}

// URLKey is a key that may hold a remote server's URL, with the transport
// it means when no type says otherwise ("" for streamable HTTP).
type URLKey struct {
	// Key is the entry's key ("url", "httpUrl").
	Key string
	// Transport is what a URL there means without a type: app.TransportSSE,
	// app.TransportHTTP, or "" (streamable HTTP too).
	Transport string
}

// CommonTypes are the type values most hosts write.
var CommonTypes = map[string]string{"": "", "stdio": app.TransportStdio, "http": app.TransportHTTP,
	"streamable-http": app.TransportHTTP, "streamablehttp": app.TransportHTTP, "streamable_http": app.TransportHTTP,
	"sse": app.TransportSSE}

// The dialects of the hosts Rootkeeper knows (app/hosts says which host
// speaks which).
var (
	// Common is the shape of Claude Code, Claude Desktop, Cursor, VS
	// Code, Windsurf (serverUrl) and most others.
	Common = Dialect{Command: "command", Args: "args", Env: "env", Cwd: "cwd", Headers: "headers",
		URLs: []URLKey{{"url", ""}, {"serverUrl", app.TransportHTTP}, {"httpUrl", app.TransportHTTP}},
		Type: "type", Stdio: "stdio", Types: CommonTypes}
	// Gemini is Gemini CLI's (and Qwen Code's): url is an SSE endpoint,
	// httpUrl a streamable HTTP one, preferred when both are given.
	Gemini = Dialect{Command: "command", Args: "args", Env: "env", Cwd: "cwd", Headers: "headers",
		URLs: []URLKey{{"httpUrl", app.TransportHTTP}, {"url", app.TransportSSE}},
		Type: "type", Stdio: "stdio", Types: CommonTypes}
	// Zed's context_servers: no type, no cwd; the command may be its older
	// object.
	Zed = Dialect{Command: "command", Args: "args", Env: "env", Headers: "headers",
		URLs: []URLKey{{"url", app.TransportHTTP}}, Types: CommonTypes, LegacyCommand: true}
	// Codex's [mcp_servers.NAME]: http_headers; bearer_token_env_var and
	// env_http_headers have Codex read tokens from its own environment.
	Codex = Dialect{Command: "command", Args: "args", Env: "env", Cwd: "cwd", Headers: "http_headers",
		URLs: []URLKey{{"url", app.TransportHTTP}}, Types: CommonTypes,
		HostOnly: []string{"bearer_token_env_var", "env_http_headers"}}
	// Opencode: {"type": "local", "command": [program, args…],
	// "environment": {…}} or {"type": "remote", "url", "headers"}; its
	// "oauth" has opencode run the authorization itself ("oauth": false
	// turns that off).
	Opencode = Dialect{Command: "command", Env: "environment", Headers: "headers",
		URLs: []URLKey{{"url", app.TransportHTTP}}, Type: "type", Stdio: "local",
		Types:    map[string]string{"local": app.TransportStdio, "remote": app.TransportHTTP},
		HostOnly: []string{"oauth"}, CommandArray: true}
	// Copilot is GitHub Copilot CLI's: "type": "local" for a stdio server.
	Copilot = Dialect{Command: "command", Args: "args", Env: "env", Cwd: "cwd", Headers: "headers",
		URLs: []URLKey{{"url", ""}}, Type: "type", Stdio: "local",
		Types: map[string]string{"": "", "local": app.TransportStdio, "stdio": app.TransportStdio,
			"http": app.TransportHTTP, "sse": app.TransportSSE}}
	// Goose's extensions: cmd, envs, uri; its builtin, platform and
	// frontend extensions are no servers.
	Goose = Dialect{Command: "cmd", Args: "args", Env: "envs", Headers: "headers",
		URLs: []URLKey{{"uri", ""}}, Type: "type", Stdio: "stdio",
		Types: map[string]string{"stdio": app.TransportStdio, "sse": app.TransportSSE, "streamable_http": app.TransportHTTP}}

	// Pasted reads an entry whose host is unknown (a paste, an import):
	// each field from whichever host's key the entry uses (command or
	// cmd; env, environment or envs; type or transport; url, serverUrl,
	// httpUrl or uri), the command a string, an array or Zed's object,
	// every host's type values, every host's host-only keys. Two keys for
	// one field in one entry are refused, since the hosts that read them
	// would not agree which one counts.
	Pasted = Dialect{Command: "command", Args: "args", Env: "env", Cwd: "cwd", Headers: "headers",
		URLs: []URLKey{{"url", ""}, {"serverUrl", app.TransportHTTP}, {"httpUrl", app.TransportHTTP}, {"uri", ""}},
		Type: "type", Stdio: "stdio", Types: pastedTypes,
		HostOnly:      []string{"oauth", "bearer_token_env_var", "env_http_headers"},
		LegacyCommand: true, CommandArray: true, Own: true, fit: true}
)

var pastedTypes = map[string]string{"": "", "stdio": app.TransportStdio, "local": app.TransportStdio,
	"http": app.TransportHTTP, "streamable-http": app.TransportHTTP, "streamablehttp": app.TransportHTTP,
	"streamable_http": app.TransportHTTP, "remote": app.TransportHTTP, "sse": app.TransportSSE}

// aliases are the keys Pasted accepts for one field, the first the usual.
var aliases = map[string][]string{
	"command": {"command", "cmd"},
	"env":     {"env", "environment", "envs"},
	"type":    {"type", "transport"},
}
