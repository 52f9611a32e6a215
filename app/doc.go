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
// Where to look — every file at this package's root, by job (a test in
// house/ fails when one is missing here):
//
// The state and the one rule:
//
//	model.go, ops.go          the state and its edits; InputError
//	store.go, storewatch.go   the state file: read, migrate, write under a lock; watched
//	indent.go, encodestate.go the state file's encoding and indentation (MarshalIndent's bytes, sooner)
//	core.go, live.go          the live hub, and what a running app knows besides the file
//	visible.go, index.go      the one rule, worked out once per snapshot
//	lookup.go                 finding a root or a server by what a person typed
//	roots.go, paths.go        a root made from a path; paths and file URIs
//	health.go                 checking a root's access again (drive, type, readable)
//
// Servers and their configuration:
//
//	put.go                    storing a server: the one way (PutServer)
//	sameservers.go            whether two lists of servers are the same, without reflection
//	slots.go, slots_socket.go folders, files and sockets named in a configuration
//	requests.go               folders asked for (by hosts, by configurations)
//	knownservers.go           what is known of the servers people use
//	program.go                the program a server runs, as its data folder knows it
//	env.go, secretview.go     a server's environment; what an editor hides
//	bridges.go                the bridges running for hosts
//	resources.go, sampling.go a server's resources, and its sampling requests
//
// Consent and the window's questions:
//
//	consent.go, plan.go       what the window asks next, what a click means
//	discover.go, found.go     projects found, and those already offered
//	people.go                 a request in the words a person reads
//
// Confinement:
//
//	confinement.go, confineoffer.go, confinefailure.go
//	                          confined or not; the offer to confine; why one stopped
//	needs.go                  folders a confined server needs to run: its alone, no roots
//	reach.go, reachask.go, reachcalls.go, reachonce.go
//	                          reach past its folders: requests, questions, calls, allow once
//	serverdata.go, servertemp.go, serverfiles.go, keptdata.go
//	                          its data folder, its temp folder, what it owns on disk, data kept aside
//	network.go, netdest.go, networkreq.go
//	                          the network: the setting, destinations and their entries, first contacts
//	netrecord.go, netrecord_*.go
//	                          the record of the destinations each server reached
//	orgpolicy.go              the organisation's policy, applied
//
// The subpackages are of three kinds. Part of the domain, used by the hub:
// health (access checks and watching of roots), audit (what each server was
// told, asked and tried, and the person's decisions), secrets (values kept in the keyring), atomicfile (how every file is
// replaced). Services around it, each with one job, which the commands and
// the app wire together: cli (the command line), hosts (the hosts' config
// files: protect, restore), serverentry (the one reader of an MCP server
// entry, in every host's shape: import, Paste and hosts all use it),
// control (the app's control socket), link (the window process's
// connection to the running app), policy (reading the organisation's
// policy), doctor, autostart, budget (the state folder's size), logfile,
// supervise (keeping background loops alive), trayhost, and apptest (test
// helpers). Helpers that know none of app's types, which app and the rest
// share: words (what a person reads: text made safe for a terminal or a
// label, shell quoting, short paths, the natural order of lists) and
// osfile (the operating system's files: opening without waiting, a file's
// drive and owner, the state file's lock) and filecall (the system calls
// Rootkeeper's own files are read, written and synced with, so that a save
// does not wake the Go runtime's monitor thread).
//
// This package must import neither Fyne nor the MCP SDK, nor detect: it finds
// projects only through the [Scanner] function type it defines.
package app
