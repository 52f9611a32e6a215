// Package app is Rootkeeper's domain: the state (roots, servers with their
// slots, decisions, requests), the one rule that decides what each server
// may see, the state store, and the live hub that everything else observes.
//
//	             ┌──────────── Core ────────────┐
//	CLI / GUI ──>│ Update(func(*State)) ─> Store │──> state.json (atomic, flock)
//	health   ──> │ SetHealth(path, report)       │
//	             │ Snapshot() ─> Visible(snap,S) │──> mcp, gui, status
//	             └───────────────────────────────┘
//
// Every answer to roots/list, every tray check mark and every status line is
// derived from [Visible] over an immutable [Snapshot]; nothing else decides.
// The rule is worked out once per snapshot (index.go), and a server whose
// configuration names folders starts only when [HoldOf] says nothing holds
// it (slots.go). Every way of storing a server goes through
// [State.PutServer] (put.go).
//
// Where to look:
//
//	model.go, ops.go     the state and its edits
//	visible.go, index.go the one rule and its index
//	slots.go, put.go     folders in a server's configuration; storing a server
//	requests.go          folders asked for (by hosts, by configurations)
//	needs.go             folders a confined server needs to run: its alone, no roots
//	program.go, keptdata.go  whose a data folder is; earlier programs' data kept aside
//	network.go           a confined server's network: the setting, what it allows, the defaults
//	networkreq.go        destinations asked about at first contact
//	netrecord.go         the record of the destinations each server reached
//	plan.go              what the window's clicks mean (grid, questions, bulk actions)
//	store.go, core.go    the state file and the live hub
//
// The subpackages are of two kinds. Part of the domain, used by the hub:
// health (access checks and watching of roots), audit (what each server was
// told, asked and tried, and the person's decisions), secrets (values kept in the keyring), atomicfile (how every file is
// replaced). Services around it, each with one job, which the commands and
// the app wire together: cli (the command line), hosts (the hosts' config
// files: protect, restore), serverentry (the one reader of an MCP server
// entry, in every host's shape: import, Paste and hosts all use it),
// control (the app's control socket), doctor,
// autostart, budget (the state folder's size), logfile, supervise (keeping
// background loops alive), trayhost, and apptest (test helpers).
//
// This package must import neither Fyne nor the MCP SDK, nor detect: it finds
// projects only through the [Scanner] function type it defines.
package app
