// Package gui is Rootkeeper's desktop face: the main window (Roots, Access,
// Discover, Servers, Activity, Hosts), the consent dialogs and the tray
// menu, built with Fyne on top of package app.
//
// They live in two processes (package link joins them). RunTray is the
// always-on process's only GUI: the tray menu, a pure function of the
// snapshot (trayMenu), shown through fyne.io/systray over D-Bus, with no
// window and no render loop, so that living in the tray costs what
// headless costs. Run is the window process, started on demand and gone
// when closed:
//
//	core.Subscribe() ──> loop ──fyne.Do──> ui.refresh(snapshot)
//	                                         ├─ tabs (roots, access, discover, servers, activity, hosts)
//	                                         └─ what to ask = app.ConsentQueue.Next(grid, now):
//	                                            one question, a review of several, a request, or wait
//	clicks ──> ui.update(fn) ──goroutine──> core.Update ──> (next snapshot)
//	link.Window.Shows() ──fyne.Do──> ui.show: come forward, a tab, a folder to share
//
// The window decides nothing: what is asked next, what Later puts off, how
// long to wait for servers still starting (app.ConsentQueue), what an
// answer records (app.Answer, app.Ticked, app.State.AnswerRequest and
// AllowAsked: a folder a confined server needs is its alone), why a
// folder is not seen (app.WhyNotSeen) and what a held server waits for
// (app.HoldOf) are app's answers; every write goes through the core (hosts
// protect included, through hosts.Options.Update). No file here builds a
// decision, a root, a need, an allow once or a refusal itself
// (house.TestWindowBuildsNoConsent fails when one does).
//
// What waits for the person is never out of sight: a line above the tabs
// counts the open requests and names the first (Answer… asks it, put off
// or not: app.ConsentQueue.AskFirst), the tray lists the folders confined
// servers tried (each line opens the window on its request: link.Show),
// and the Access tab lists the picked server's requests. A confined
// server's attempt is asked as app.ReachQuestion puts it: every call that
// waits, which ones allow once cannot do, and the safe default (Allow once
// for reads, Deny for anything else). The dialog follows its request while
// it is open (followRequest): a call that joins shows before it can be
// answered, Allow once answers the calls on screen and no other, and when
// the wait runs out (a timer, as nothing changes in the state) it says so.
// A window that ends with a question on screen, closed or killed, leaves
// it for the next window to ask again; what the person put off with Later
// the window tells the running app (Options.OnLater), which hands it on.
//
// When the window opens, the Discover tab's scan runs by itself; the Roots
// tab shows it on the first launch and, later, only projects no earlier
// start found (found.go; what to offer is app.Offerable's answer); the
// tray has a line about it while it looks and once it found something (the
// window tells the running app, Options.OnFinding).
//
// Every dialog answers Escape, Enter and Tab the same way, through one
// helper (keys.go): a dialog's focusable widgets are made by its
// dialogKeys, so that a focused one passes Escape and Enter on.
//
// Sampling requests arrive from the MCP client's goroutines through the
// app.SamplingReviewer the window hands out (Options.SetReviewer): each
// request and each answer waits in a queue of dialogs, one on screen at a
// time (sampling_dialog.go).
//
// Every check mark, list and status line is derived from an app.Snapshot
// through app's functions (Visible, SharedWith, Pending, RiskWarnings); this
// package decides no policy. The UI goroutine never touches the disk, a
// subprocess or the network: such work runs in a goroutine and comes back
// through fyne.Do.
//
// gui must not import mcp or detect; it sees them only through the
// interfaces app defines (app.Scanner, app.ServerController).
package gui
