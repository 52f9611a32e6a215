// Package health keeps exposed roots honest. A [Monitor] checks every enabled
// root with [app.CheckAccess] before it can be exposed and again whenever
// something may have changed, and publishes the result with
// [app.Core.SetHealth], so a folder that was deleted, moved, locked or
// unmounted drops out of [app.Visible] at once and comes back only when it is
// really back.
//
//	                      ┌────────────── Monitor.Run ──────────────┐
//	core.Subscribe() ───> │ enabled roots ─> watches (root, parent,  │
//	fsnotify events ────> │   .git dir) ─> dirty set ─> debounce ────│─> workers: CheckAccess,
//	poll ticker ────────> │   (100 ms)     (polled roots)            │   inode, rename pairing,
//	wall-clock jump ────> │   recheck all                            │   .git/HEAD branch
//	sweep (1 min) ──────> │   recheck all                            │        │
//	mount table change ─> │   recheck all                            │        │
//	Check(path) ────────> │   check now; answered when done          │<───────┘
//	                      └──────────────────────────┬───────────────┘
//	                                                 └─> core.SetHealth / core.SetNotice("watch")
//
// Watches are not recursive, and a root that is deleted or renamed is seen
// from its parent, so each root costs up to three watches: the root itself,
// its parent, and for git repositories the git directory (where HEAD lives,
// so the shown branch stays current). Events inside a root that cannot change
// its health (files created in it, say) are dropped before the debounce, so a
// checkout or a big copy costs no checks at all; events that can (a chmod of
// the root, its removal) are collected for [Options.Debounce] and checked
// once.
//
// Every root is also checked once a minute, a safety net for what no watch
// sees: a folder above the parent made unreadable, an unmount the kernel did
// not announce.
//
// [Monitor.Check] checks one root on request (the window's "Check again",
// `rootkeeper roots check`) and answers with the health it published.
//
// When the kernel's watch or instance limit is hit (ENOSPC, EMFILE), the
// roots that could not be watched are checked every [Options.PollInterval]
// instead, and the notice [NoticeTopic] says so once.
//
// This package imports app and the standard library, fsnotify and x/sys; it
// must not import Fyne, the MCP SDK, mcp or detect.
package health
