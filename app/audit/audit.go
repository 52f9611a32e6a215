// Package audit records what each MCP server was told about its roots: every
// roots/list answered (or refused), one JSON object per line in
// STATE/audit.jsonl, rotated to audit.jsonl.1 when it grows past a limit.
//
// It owns only those two files and the `rootkeeper audit` command that prints
// them. It imports nothing but the standard library and package app.
package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// File names inside the state folder.
const (
	FileName    = "audit.jsonl"
	RotatedName = FileName + ".1"
)

// DefaultMaxSize is the size at which the log is rotated: 10 MB.
const DefaultMaxSize = 10 << 20

// Ways a server learns its roots, for Entry.Via.
const (
	ViaRootsList    = "roots/list"    // the server sent roots/list
	ViaInputRequest = "input-request" // a roots/list input request inside a client request (SEP-2322)
	ViaArgs         = "args"          // rootsMode args: paths appended to the command line at start
	ViaEnv          = "env"           // rootsMode env: paths in ROOTKEEPER_ROOTS at start
	ViaReach        = "reach"         // a confined server tried a path past its ruleset (Tried, Op, Decided)
	// ViaConfinement records the person's decision to run a server
	// confined or unconfined (Decided: ConfinedOn or ConfinedOff; Op: by
	// whom, as app.Source).
	ViaConfinement = "confinement"
)

// The person's decisions on a server's confinement (Entry.Decided, with
// Via ViaConfinement).
const (
	ConfinedOn  = "confined"
	ConfinedOff = "run unconfined"
)

// What became of an attempt of a confined server (Entry.Decided).
const (
	ReachIgnored  = "not asked"    // a system file, a cache, a missing file: never asked about
	ReachLimited  = "rate-limited" // the server asked too often: not asked, refused
	ReachRefused  = "refused"      // denied, asked before and not answered, or answered without it: Landlock refused it
	ReachUnasked  = "unasked"      // nobody could be asked: refused at once, the request waits for the person
	ReachTimedOut = "timed out"    // asked, not answered within the wait: refused
	ReachOnce     = "allowed once" // Rootkeeper opened it and handed the descriptor
	ReachAllowed  = "allowed"      // the folder is allowed now: handed, the server restarts
)

// Entry is one answer given to a server.
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
	// answers to the same server (the last of them at Time), given within
	// CoalesceWindow of the line before; a line without it stands for one.
	// A server asking in a loop thus cannot flood the log and rotate away
	// everyone else's history.
	Repeated int `json:"repeated,omitempty"`
	// Tried, Op and Decided are, for Via ViaReach, the path a confined
	// server tried, what it tried, and what became of it; Roots holds
	// the folder asked about, if any.
	Tried   string `json:"tried,omitempty"`
	Op      string `json:"op,omitempty"`
	Decided string `json:"decided,omitempty"`
}

// CoalesceWindow is how long identical answers to one server are counted
// rather than written.
const CoalesceWindow = time.Minute

// same reports whether two entries record the same answer to the same
// server (times aside).
func (e Entry) same(o Entry) bool {
	return e.Server == o.Server && e.ProtocolVersion == o.ProtocolVersion && e.Error == o.Error &&
		e.Via == o.Via && slices.Equal(e.Roots, o.Roots) && e.Tried == o.Tried && e.Op == o.Op && e.Decided == o.Decided
}

// Log appends entries to DIR/audit.jsonl. It is safe for concurrent use.
type Log struct {
	dir string
	// MaxSize is the size in bytes past which the file is rotated (the
	// previous audit.jsonl.1 is replaced). Zero means DefaultMaxSize.
	MaxSize int64

	mu   sync.Mutex
	f    *os.File
	size int64
	// last is each server's last entry written and held those repeated
	// since, not yet written.
	last map[string]Entry
	held map[string]Entry
}

// NewLog returns a log writing into the folder dir (created on first write).
func NewLog(dir string) *Log { return &Log{dir: dir} }

// Path is the current log file.
func (l *Log) Path() string { return filepath.Join(l.dir, FileName) }

// Append writes e as one line. A zero Time is set to now; nil Roots become
// an empty list. The same answer given again to the same server within
// CoalesceWindow of the last line written for it is held and counted, and
// written as one entry (Repeated) when a different answer comes, the window
// has passed, or the log is closed.
func (l *Log) Append(e Entry) error {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	if e.Roots == nil && e.Error == "" {
		e.Roots = []string{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last, l.held = map[string]Entry{}, map[string]Entry{}
	}
	if prev, ok := l.last[e.Server]; ok && prev.same(e) && e.Time.Sub(prev.Time) < CoalesceWindow {
		h := l.held[e.Server]
		n := h.Repeated + 1
		h, h.Repeated = e, n
		l.held[e.Server] = h
		return nil
	}
	if err := l.flushHeld(e.Server); err != nil {
		return err
	}
	l.last[e.Server] = e
	return l.write(e)
}

// flushHeld writes the answers held for server, if any; l.mu is held.
func (l *Log) flushHeld(server string) error {
	h, ok := l.held[server]
	if !ok {
		return nil
	}
	delete(l.held, server)
	return l.write(h)
}

// write appends one entry; l.mu is held.
func (l *Log) write(e Entry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit: encoding entry: %w", err)
	}
	line = append(line, '\n')
	if err := l.open(); err != nil {
		return err
	}
	max := l.MaxSize
	if max <= 0 {
		max = DefaultMaxSize
	}
	if l.size > 0 && l.size+int64(len(line)) > max {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	n, err := l.f.Write(line)
	l.size += int64(n)
	if err != nil {
		return fmt.Errorf("audit: writing %s: %w", l.Path(), err)
	}
	return nil
}

// open opens the file if it is not open; l.mu is held.
func (l *Log) open() error {
	if l.f != nil {
		return nil
	}
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	f, err := os.OpenFile(l.Path(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit: %w", err)
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// rotate moves the current file to audit.jsonl.1 and starts a new one.
func (l *Log) rotate() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	l.f = nil
	if err := os.Rename(l.Path(), filepath.Join(l.dir, RotatedName)); err != nil {
		return fmt.Errorf("audit: rotating: %w", err)
	}
	return l.open()
}

// Close writes what is held and closes the file; a later Append opens it
// again. It returns the first error of either: an entry held back (a
// repeated answer's count) that could not be written is lost, and the
// caller must say so.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for server := range l.held {
		errs = append(errs, l.flushHeld(server))
	}
	if l.f != nil {
		errs = append(errs, l.f.Close())
		l.f = nil
	}
	return errors.Join(errs...)
}

// Read returns the entries in dir, oldest first: the rotated file, then the
// current one. A non-empty server keeps only that server's entries. Lines
// that cannot be parsed (a write cut short by a crash) are skipped. A folder
// with no log is no entries, not an error.
func Read(dir, server string) ([]Entry, error) {
	var out []Entry
	for _, name := range []string{RotatedName, FileName} {
		f, err := os.Open(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var e Entry
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			if server == "" || e.Server == server {
				out = append(out, e)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("audit: reading %s: %w", name, err)
		}
	}
	return out, nil
}

// Stamp says, cheaply, which version of the log is in dir: the size and
// modification time of both files. Readers compare stamps to read the log
// again only when it changed.
type Stamp [4]int64

// StampOf stats the log's files in dir.
func StampOf(dir string) Stamp {
	var s Stamp
	for i, name := range []string{RotatedName, FileName} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			s[2*i], s[2*i+1] = fi.Size(), fi.ModTime().UnixNano()
		}
	}
	return s
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
