// Package mcp is Rootkeeper's embedded MCP client: one go-sdk Client per
// configured server, each answering roots/list with exactly what the one rule
// ([app.Visible]) allows that server to see, at the moment it asks.
//
//	            app.Core ──Subscribe()──> Manager.Run ──poke──> adapter (one per server)
//	               ▲                        │ reconcile          ├─ sdk.Client (roots, middleware)
//	SetServerStatus│                        │ app.Changed        ├─ session ── transport ── server process
//	               └────────────────────────┴────────────────────┤    (stdio: own process group,
//	                                                             │     stderr → ring + logs/NAME.log)
//	        roots/list, input requests ──> answerRoots ──> app.Visible(core.Snapshot(), S)
//	                                              └──> audit.jsonl (package audit)
//
// # How roots reach a server
//
// Every answer is computed when it is given, from the latest snapshot, so it
// is never stale: roots/list sent by the server (protocol versions up to
// 2025-11-25) and roots/list input requests embedded in the results of the
// client's own tools/call, prompts/get and resources/read (SEP-2322, protocol
// 2026-07-28) both go through one function, which also writes the audit
// entry. When a change moves a server's visible set (app.Changed), its
// adapter updates the Client's roots, and the SDK sends that server — and no
// other — notifications/roots/list_changed. Each adapter does this on its own
// goroutine, so a server that stops reading never delays another.
//
// A stdio server's messages are read by stdioConn, not by the SDK's own
// stdio connection: the same framing, exact keys, batches, 16 MiB bound and
// shutdown, but each message decoded in place, where the SDK made a 32 KiB
// stream decoder for every decode (most of what the client allocated). Its
// pipes are read and written raw (package rawio), and its roots/list is
// answered in the connection itself (answerWire: the same gate, answer and
// audit as through the SDK, the list encoded once for every server given
// it), without a goroutine of the SDK's each time. The answers' audit lines
// are written together (audit.Log.AppendThen), and each answer goes to its
// server only once its line is written.
// BenchmarkGrantToServer at 50 go-sdk servers on two cores (the servers'
// reports collected by a process of its own): a grant costs Rootkeeper's
// side 3-4 ms of CPU and about 125 thread wake-ups, 50 of them the Go
// runtime's monitor polling while the state file is saved (sysmon-ms),
// most of the rest the kernel's cost of waking a thread on this virtual
// machine; the servers take 13–18 ms together, so their own work, not the
// client, bounds how soon the last of them holds the change.
//
// A server whose visible set becomes empty is restarted (unless
// Options.NoRestartOnEmpty): some servers, server-filesystem among them,
// ignore an empty roots list and keep the folders they had.
//
// rootsMode off declares no roots capability and answers roots/list with
// -32601 "Roots not supported", data {"reason": "Client does not have roots
// capability"}; args and env declare none either and pass the visible paths
// on the command line or in ROOTKEEPER_ROOTS, restarting the server when they
// change. If the roots cannot be computed the answer is -32603.
//
// # Sampling
//
// Servers whose sampling mode is not off declare the sampling capability
// (the roots capability is unaffected). Each sampling/createMessage is shown
// to the person (Options.Reviewer, or Manager.SetReviewer once the GUI is
// up), who may edit or reject it; the approved request goes to the
// configured provider (app.SamplingConfig: Anthropic Messages or
// OpenAI-compatible chat completions over plain HTTP) with the token cap,
// and the answer is shown again before it goes back. A rejection is
// JSON-RPC error -1 "User rejected sampling request"; without a reviewer
// (headless) every request is rejected the same way; without a
// configuration, or when the provider fails, the answer is -32603. See
// sampling.go.
//
// # Resources
//
// The client side of Resources (resources.go): Manager.ListResources follows
// the cursor (bounded), ReadResource goes through the same sending
// middleware as tools/call, so a 2026-07-28 server's roots input requests
// are answered and audited; Subscribe and Unsubscribe need the server's
// subscribe capability. notifications/resources/updated and list_changed
// reach the functions given to OnResourceEvent. A server without the
// resources capability gets an error naming it, not a request.
//
// # Connections
//
// Servers connect in parallel; each adapter reconnects with exponential
// backoff and jitter (capped, 60 s by default) after a failure or exit, and
// publishes its status with core.SetServerStatus at every change. A stdio
// server runs in its own process group; stopping it closes its stdin, then
// sends SIGTERM to the group after Options.StopGrace and SIGKILL after
// Options.KillAfter. go-sdk first probes with server/discover (2026-07-28);
// a stdio server that exits on that unknown method (go-sdk issue #1177,
// https://github.com/modelcontextprotocol/go-sdk/issues/1177) is started
// again and spoken to with initialize only, and remembered as legacy.
//
// # Strangers
//
// Servers are programs written by strangers (gate.go, liveness in
// adapter.go): each one's requests to Rootkeeper pass a gate (in-flight and
// rate bounds, excess refused with -32000 before any dialog or provider);
// a stdio server's requests not yet answered, the answers it has not read
// included, are bounded too (backlog.go): past the bound its stdout is not
// read until answers drain, and one whose backlog stays full with nothing
// drained is stopped as hostile, not restarted until the person says so;
// resources/list_changed storms are coalesced; remote replies are bounded
// to MaxMessageBytes; every connected server is pinged and restarted when
// it stops answering; stderr logs rotate while written (app/logfile);
// stdio servers get the parent-death signal, and package reap ends the
// descendants that left their process group.
//
// # The bridge
//
// Package bridge (mcp/bridge) serves the hosts' copies of the servers: a
// stdio relay between a host and a server that answers roots through
// RootsAnswer and AnswerEntry, the same path as the managed clients, and
// starts servers with StdioCommand, as they do.
//
// This package must not import Fyne. What it changes in the state is the
// servers' own doing, through app.Core: the requests a confined server's
// reach raises (ReachWatch) and its network's first contacts raise
// (NetWatch, which also keeps the record of the destinations it reached,
// in the state folder beside the state file), and the folders a bridge's
// host asks for; the person's decisions are never written here.
// Everything else it reports as live status.
package mcp
