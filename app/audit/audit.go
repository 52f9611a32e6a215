package audit

import (
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"
)

// File names inside the state folder: the trail and the noise, each with
// its one rotated generation.
const (
	FileName         = "audit.jsonl"
	RotatedName      = FileName + ".1"
	NoiseName        = "audit-noise.jsonl"
	NoiseRotatedName = NoiseName + ".1"
)

// Default sizes at which the files are rotated: the trail at 10 MB, the
// noise at 8 MB.
const (
	DefaultMaxSize      = 10 << 20
	DefaultNoiseMaxSize = 8 << 20
)

// Ways a server learns its roots, for Entry.Via.
const (
	ViaRootsList    = "roots/list"    // the server sent roots/list
	ViaInputRequest = "input-request" // a roots/list input request inside a client request (SEP-2322)
	ViaArgs         = "args"          // rootsMode args: paths appended to the command line at start
	ViaEnv          = "env"           // rootsMode env: paths in ROOTKEEPER_ROOTS at start
	ViaReach        = "reach"         // a confined server tried a path past its ruleset (Tried, Op, Decided)
	// ViaNetwork is a confined server's contact past its sandbox: Tried is
	// the destination ("api.tavily.com:443", "unix:/run/x.sock"), Op
	// "connect" or "look up", Decided what became of it (the Reach…
	// outcomes); kept in the trail and budgeted as an attempt is.
	ViaNetwork = "network"
	// ViaConfinement records the person's decision to run a server
	// confined or unconfined (Decided: ConfinedOn or ConfinedOff; Op: by
	// whom, as app.Source).
	ViaConfinement = "confinement"
	// ViaSummary counts the noise of a server that was not written
	// (Unwritten, between Since and Time), with one sample (Tried, Op).
	// The log writes it; callers never append it.
	ViaSummary = "summary"
)

// The person's decisions on a server's confinement (Entry.Decided, with
// Via ViaConfinement).
const (
	ConfinedOn  = "confined"
	ConfinedOff = "run unconfined"
)

// What became of an attempt of a confined server (Entry.Decided).
const (
	ReachIgnored  = "not asked"     // a system file, a cache, a missing file: never asked about
	ReachLimited  = "rate-limited"  // the server asked too often: not asked, refused
	ReachRefused  = "refused"       // denied, asked before and not answered, or answered without it: Landlock refused it
	ReachUnasked  = "unasked"       // nobody could be asked: refused at once, the request waits for the person
	ReachTimedOut = "timed out"     // asked, not answered within the wait: refused
	ReachOnce     = "allowed once"  // Rootkeeper opened it and handed the descriptor
	ReachAllowed  = "allowed"       // the folder is allowed now: handed, the server restarts
	ReachPolicy   = "never granted" // the organisation's policy never grants it: refused, never asked
)

// Entry is one line of the trail: an answer given to a server, an attempt
// of a confined server and what became of it, a decision, or a summary of
// what was not written.
type Entry struct {
	Time            time.Time `json:"time"`
	Server          string    `json:"server"`
	ProtocolVersion string    `json:"protocolVersion,omitempty"`
	// Roots are the URIs sent; empty (not absent) for an empty list.
	Roots []string `json:"roots"`
	// Error is the JSON-RPC error sent instead of a list, if any.
	Error string `json:"error,omitempty"`
	Via   string `json:"via"`
	// Repeated, when set, says this line stands for that many identical
	// lines of the same server (the last of them at Time), within
	// CoalesceWindow of the line before; a line without it stands for one.
	Repeated int `json:"repeated,omitempty"`
	// Tried, Op and Decided are, for Via ViaReach, the path a confined
	// server tried, what it tried, and what became of it; Roots holds
	// the folder asked about, if any.
	Tried   string `json:"tried,omitempty"`
	Op      string `json:"op,omitempty"`
	Decided string `json:"decided,omitempty"`
	// Request marks the attempt that raised a new request (asked, or
	// recorded for the person when nobody could be asked).
	Request bool `json:"request,omitempty"`
	// Absent marks an attempt on a path that did not exist: the call
	// failed as it would have unconfined (a runtime looking for a program
	// along PATH, a file in the places it may be), and nothing was there
	// to ask about.
	Absent bool `json:"absent,omitempty"`
	// Unwritten, for Via ViaSummary, counts the lines of the server not
	// written since Since (up to Time), by what became of them (Decided,
	// or Via for an answer given again).
	Unwritten map[string]int `json:"unwritten,omitempty"`
	Since     time.Time      `json:"since,omitzero"`
}

// CoalesceWindow is how long identical lines of one server are counted
// rather than written.
const CoalesceWindow = time.Minute

// same reports whether two entries record the same thing of the same
// server (times and counts aside).
func (e Entry) same(o Entry) bool {
	return e.Server == o.Server && e.ProtocolVersion == o.ProtocolVersion && e.Error == o.Error &&
		e.Via == o.Via && slices.Equal(e.Roots, o.Roots) && e.Tried == o.Tried && e.Op == o.Op &&
		e.Decided == o.Decided && e.Request == o.Request && e.Absent == o.Absent
}

// Log appends entries to the trail and the noise files of a folder. It is
// safe for concurrent use; several processes may write the same folder.
type Log struct {
	// MaxSize is the size in bytes past which the trail is rotated (the
	// previous audit.jsonl.1 is replaced). Zero means DefaultMaxSize.
	MaxSize int64
	// NoiseMaxSize is the same for the noise file. Zero means
	// DefaultNoiseMaxSize.
	NoiseMaxSize int64
	// NoiseBudget is how many lines of noise a server may have written a
	// minute (and at once). Zero means DefaultNoiseBudget.
	NoiseBudget int
	// SummaryEvery is how often the count of a server's noise not written
	// is written. Zero means DefaultSummaryEvery.
	SummaryEvery time.Duration

	mu           sync.Mutex
	trail, noise rotating
	// Group commit: lines are queued under mu and written by one writer at
	// a time (writing), outside mu, as many as are queued in one write;
	// after each write it calls the thens whose lines it wrote, in order.
	writing bool
	thens   []then
	idle    sync.Cond // signalled when the writer stops (Close waits for it)
	servers map[string]*serverNoise
	// told is, by server and way (Via), the last answer written to the
	// trail: the same again is noise.
	told map[toldKey]Entry
	// firsts are the server, folder and outcome of the attempts written to
	// the trail as the first of their kind (bounded).
	firsts map[string]bool
}

// NewLog returns a log writing into the folder dir (created on first write).
func NewLog(dir string) *Log {
	l := &Log{trail: rotating{path: filepath.Join(dir, FileName)}, noise: rotating{path: filepath.Join(dir, NoiseName)}}
	l.idle.L = &l.mu
	return l
}

// Path is the trail's current file.
func (l *Log) Path() string { return l.trail.path }

// NoisePath is the noise's current file.
func (l *Log) NoisePath() string { return l.noise.path }

// Append records e. A zero Time is set to now; nil Roots become an empty
// list. A line of the trail is written before Append returns. Noise is
// written within the server's budget, counted beyond it; the same line of
// a server again within CoalesceWindow of the last one written is held and
// counted, and written as one line (Repeated) when a different one comes,
// the window has passed, or the log is closed.
func (l *Log) Append(e Entry) error {
	var err error
	written := make(chan struct{})
	l.AppendThen(e, func(werr error) { err = werr; close(written) })
	<-written
	return err
}

// AppendThen records e as Append does, and calls then once what e wrote is
// written (handed to the kernel: it survives Rootkeeper's end, not the
// machine's), with the error of recording it, if any. then may run before
// AppendThen returns, or later on another goroutine: that of the caller
// whose write took e's line along. It must not block, nor Append to this
// log (the writer would wait for itself).
//
// While a write is under way, lines are queued for the next one, which
// takes all of them: the answers one change gives fifty servers take a few
// writes, not fifty (and a stat of the path each). A caller that finds
// nothing under way yields once before writing, so that the goroutines
// ready to run (the other servers' answers) queue theirs into its write.
func (l *Log) AppendThen(e Entry, then func(error)) {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	if e.Roots == nil && e.Error == "" {
		e.Roots = []string{}
	}
	l.mu.Lock()
	err := l.record(e)
	if !l.writing && len(l.trail.pending) == 0 && len(l.noise.pending) == 0 {
		l.mu.Unlock() // nothing to write: held, counted, or not encodable
		then(err)
		return
	}
	l.thens = append(l.thens, thenOf(then, err))
	if !l.startWriting() {
		l.mu.Unlock() // the writer under way takes it along
		return
	}
	l.mu.Unlock()
	runtime.Gosched()
	l.commit()
}

// startWriting reports whether the caller is to write what is queued (and
// commit), making it the log's writer: when no write is under way and
// something is queued; l.mu is held.
func (l *Log) startWriting() bool {
	if l.writing || (len(l.trail.pending) == 0 && len(l.noise.pending) == 0 && len(l.thens) == 0) {
		return false
	}
	l.writing = true
	return true
}

// then is a caller's function waiting for its lines to be written, with
// the error of queueing them.
type then struct {
	fn  func(error)
	err error
}

func thenOf(fn func(error), err error) then { return then{fn: fn, err: err} }

// record sorts e into the trail or the noise and queues what is to be
// written; l.mu is held.
func (l *Log) record(e Entry) error {
	if l.servers == nil {
		l.servers, l.told, l.firsts = map[string]*serverNoise{}, map[toldKey]Entry{}, map[string]bool{}
	}
	s := l.server(e.Server)
	var err error
	if s.total > 0 && e.Time.Sub(s.since) >= cmpOr(l.SummaryEvery, DefaultSummaryEvery) {
		err = l.writeSummary(s)
	}
	if l.isTrail(e) {
		err = errors.Join(err, l.flushHeld(s))
		s.last, s.hasLast = e, true
		forward(e)
		return errors.Join(err, l.writeTrail(e))
	}
	return errors.Join(err, l.appendNoise(s, e))
}

// commit writes what is queued, as the log's one writer, until nothing
// is; after each write it calls the thens of the lines it wrote.
func (l *Log) commit() {
	l.mu.Lock()
	for len(l.trail.pending) > 0 || len(l.noise.pending) > 0 || len(l.thens) > 0 {
		trail, noise, thens := l.trail.take(), l.noise.take(), l.thens
		l.thens = nil
		l.mu.Unlock()
		err := errors.Join(l.trail.write(trail, cmpOr(l.MaxSize, DefaultMaxSize)),
			l.noise.write(noise, cmpOr(l.NoiseMaxSize, DefaultNoiseMaxSize)))
		for _, t := range thens {
			t.fn(errors.Join(t.err, err))
		}
		l.mu.Lock()
		l.trail.done(trail)
		l.noise.done(noise)
	}
	l.writing = false
	l.idle.Broadcast()
	l.mu.Unlock()
}

// Close writes what is held and what is counted and closes the files; a
// later Append opens them again. It returns what failed: an entry held
// back (a repeated line's count, a summary) that could not be written is
// lost, and the caller must say so.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.writing {
		l.idle.Wait()
	}
	var errs []error
	for _, s := range l.servers {
		errs = append(errs, l.flushServer(s))
	}
	errs = append(errs, l.trail.write(l.trail.take(), cmpOr(l.MaxSize, DefaultMaxSize)),
		l.noise.write(l.noise.take(), cmpOr(l.NoiseMaxSize, DefaultNoiseMaxSize)))
	errs = append(errs, l.trail.close(), l.noise.close())
	return errors.Join(errs...)
}

// writeTrail queues e for the trail; l.mu is held.
func (l *Log) writeTrail(e Entry) error { return l.trail.queue(e) }

// writeNoise queues e for the noise file; l.mu is held.
func (l *Log) writeNoise(e Entry) error { return l.noise.queue(e) }

// cmpOr is v, or def when v is zero or less.
func cmpOr[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Confinement records the person's decision to run server confined (on)
// or not, taken by (an app.Source: "dialog", "window", "command-line"),
// in the audit log of the state folder dir.
func Confinement(dir, server string, on bool, by string) error {
	decided := ConfinedOff
	if on {
		decided = ConfinedOn
	}
	l := NewLog(dir)
	defer l.Close()
	return l.Append(Entry{Time: time.Now().UTC(), Server: server, Roots: []string{}, Via: ViaConfinement, Op: by, Decided: decided})
}
