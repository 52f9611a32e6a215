// Package serverentry reads MCP server entries, in every shape hosts write
// them, into the server Rootkeeper stores. It is the one reader of a server
// entry: `rootkeeper import`, the window's Paste and the hosts' config
// files (app/hosts: list, protect, restore) all go through [Read], so an
// entry means the same server wherever it comes from.
//
//	host's file ──app/hosts──> one entry's JSON ─┐
//	                                             ├─> Read(name, raw, dialect) ─> Entry{Server, Skip, Off, Bridges}
//	paste, import ──Parse──> each entry's JSON ──┘        (or an error naming the bad key)
//
// Hosts spell the same thing with different keys, each host a [Dialect]
// (which key holds the command, its arguments, environment, URL,
// transport): "command" + "args" or one "command" array (opencode), "cmd"
// and "envs" (Goose), "url", "serverUrl" (Windsurf), "httpUrl" (Gemini
// CLI), "uri" (Goose), "type": "stdio"/"local"/"remote"/"http"/"sse". A
// paste or an import comes from no known host: it is read with [Pasted],
// which takes each field from whichever host's key the entry uses.
//
// What the readers share, and where they differ on purpose:
//
//   - An entry is read on its exact keys, as hosts read it. A key the reader
//     reads spelled twice or in another case ({"command": …, "Command": …})
//     is refused: a host written in JavaScript reads one, a host written in
//     Go (encoding/json matches keys in any case) the other, and protect
//     would rewrite one while the host runs the other.
//   - A command makes a stdio server; a URL without a command a remote one,
//     whose transport is the type's, else the URL key's, else streamable
//     HTTP. Headers belong to a remote server, env and cwd to a stdio one.
//   - Arguments and environment values may be numbers or booleans (their
//     JSON text); a null environment value or header is left out.
//   - What Rootkeeper cannot do in the host's place makes the entry a Skip,
//     with the reason: a variable only the host expands (${input:x},
//     ${workspaceFolder}) in the command, its arguments, cwd, URL or
//     headers; a key that has the host sign in or read a token itself;
//     a type that is no server (Goose's builtin extensions).
//   - A host's entry that is turned off (disabled: true, enabled: false) is
//     still protected, so that turning it on later does not bypass
//     Rootkeeper; a paste or an import skips it (Rootkeeper would start
//     it). An entry that already runs Rootkeeper's bridge (Bridges) is
//     protected already; a paste or an import skips it.
//   - Only a paste or an import may state Rootkeeper's own settings
//     (rootsMode); a host's entry states none.
//   - The environment stays in a host's file, where the host expands it; a
//     paste or an import stores it, so there a variable in it is a Skip
//     too (Parse).
//
// JSON with comments and trailing commas (JSONC: VS Code, Zed, opencode) is
// parsed by hujson only ([ParseJSONC], which app/hosts uses for whole
// files too), after a check of its nesting depth: hujson parses by
// recursion, and a few megabytes of "[" would exhaust the stack, which
// kills the process.
package serverentry
