// Package audit is the trail of what Rootkeeper told each MCP server, what
// servers asked for and what the person decided: one JSON object per line
// (an Entry), in two pairs of files in the state folder.
//
//	Log.Append(e)
//	  ├─ the trail? ── yes ───────────────> audit.jsonl        (→ audit.jsonl.1 at 10 MB)
//	  └─ noise ─> the server's budget ─ in ─> audit-noise.jsonl  (→ audit-noise.jsonl.1 at 8 MB)
//	                    └─ over: counted ───> a summary line there, once a minute
//
// # The trail and the noise
//
// The trail (audit.jsonl, then audit.jsonl.1) keeps the lines that say
// something new:
//
//   - what a server was told: its first roots/list answer (or input
//     request, or the roots it was started with) in this process, and every
//     answer that differs from the one before on the same way;
//   - requests: an attempt of a confined server that raised a new request
//     (Entry.Request), asked or recorded for nobody (ReachUnasked) — a
//     path past its folders (Via reach) or a network destination (Via
//     network), alike;
//   - decisions and their first effect: confinement on or off, every call
//     allowed once, and the first attempt of a server on a folder that was
//     refused, allowed or timed out.
//
// Everything else is noise: attempts that became nothing new (not asked,
// rate-limited, refused or timed out again on the same folder) and the
// same answer given again. Noise goes to audit-noise.jsonl through a budget
// per server (NoiseBudget lines a minute, a token bucket): within it the
// line is written (identical lines within CoalesceWindow still make one
// line with a count, Entry.Repeated); over it the line is only counted, and
// a summary line (Via ViaSummary) says, once per SummaryEvery and at Close,
// how many were not written, by what became of them, with one sample.
//
// # Why two files
//
// A log that rotates by size keeps the newest bytes. With one file, a
// server making a million distinct attempts rotates away the person's
// decisions however little each attempt costs, and coalescing only merges
// identical lines. With two files, the noise rotates only noise: nothing a
// server does past raising requests writes to the trail, and requests are
// themselves limited (app.ReachLimiter: 5 new ones a minute per server; at
// most one open per folder). A server that does nothing but raise requests
// in new folders adds about two lines a request (the request and its first
// refusal), ~3 MB a day, so the trail still holds days of it; a server
// that floods attempts adds nothing to the trail at all. Dropping noise at
// rotation inside one file would need rewriting the file under a lock
// shared by every process that writes it; two files rotate by a rename.
//
// # Bounds
//
// The trail takes at most 2 × MaxSize (20 MB), the noise 2 × NoiseMaxSize
// (16 MB): 36 MB whatever any server does (the budget keeps the noise file
// slow to rotate too: one flooding server writes ~60 lines and a summary a
// minute). Every process that writes (the app, each bridge) appends to the
// same files; a writer checks the file's real size and identity before
// each write, and rotation takes an flock on the file (Unix) so that two
// processes never rotate the same file twice.
//
// # Written together, never after the fact
//
// Lines are queued and written by one goroutine at a time, as many as are
// queued in one write (group commit): the answers one grant gives fifty
// servers take a handful of writes, not fifty. AppendThen lets a caller
// act once its line is written (an answer is sent to a server only then),
// so that what a server was told is in the file whenever the server has
// it: written to the kernel, which keeps it if Rootkeeper is killed; as
// before, the trail is not synced to the disk for each line, so a crash
// of the machine itself may lose its last lines.
//
// `rootkeeper audit` (RunCommand) prints both pairs merged in time order;
// Read is the same for the window. The package owns these four files and
// that command. It imports nothing but the standard library.
package audit
