// Package app is Rootkeeper's domain: the state (roots, servers, decisions),
// the one rule that decides what each server may see, the state store, and the
// live hub that everything else observes.
//
//	             ┌──────────── Core ────────────┐
//	CLI / GUI ──>│ Update(func(*State)) ─> Store │──> state.json (atomic, flock)
//	health   ──> │ SetHealth(path, report)       │
//	             │ Snapshot() ─> Visible(snap,S) │──> mcp, gui, status
//	             └───────────────────────────────┘
//
// Every answer to roots/list, every tray check mark and every status line is
// derived from [Visible] over an immutable [Snapshot]; nothing else decides.
//
// This package must import neither Fyne nor the MCP SDK, nor detect: it finds
// projects only through the [Scanner] function type it defines.
package app
