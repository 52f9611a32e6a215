// Package secrets keeps the secrets of servers' configurations — tokens,
// keys and passwords in their env values, headers, arguments and URLs — out
// of state.json: they go to the OS keyring (Secret Service over D-Bus on
// Linux, the Keychain on macOS, the Credential Manager on Windows, all
// through github.com/zalando/go-keyring) and the state file keeps a
// reference in the place of each secret part (app/secrets/spot finds them):
//
//	"env": {"GITHUB_TOKEN": "keyring:rootkeeper/github/env/GITHUB_TOKEN"}
//	"headers": {"Authorization": "Bearer keyring:rootkeeper/web/header/Authorization/0"}
//	"args": ["postgres://user:keyring%3Arootkeeper%2Fdb%2Farg%2F0@host/db"]
//
//	servers add / import / hosts protect / the window
//	        │  Store.Update ── BeforeSave = Sealer.Seal ──> keyring.Set
//	        ▼
//	   state.json (references) ──> mcp: ResolveHiding just before a server
//	                               starts ──> keyring.Get, and a Hider of
//	                               what it got for its errors and stderr
//
// When no keyring is reachable the values stay in the state file (mode
// 0600) and the Sealer says so; they move on a later save once a keyring
// answers. Secrets never appear in `servers list --json`: references are
// shown as they are, values still in the file are redacted (Redact).
//
// Where a server keeps secrets is listed once, app.EachSecretField: Seal,
// ResolveHiding, Redact, Where, Values and Forget all walk it, as do the
// window's editor (app.ForEditing) and app.SameProgram.
//
// This package may import app (it is one of app's adapters) but neither
// Fyne nor the MCP SDK.
package secrets
