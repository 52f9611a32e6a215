package app

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"rootkeeper/app/atomicfile"
	"rootkeeper/app/words"
)

// The record of a confined server's network: every destination it
// reached or tried (name, address, port, first and last time, how often,
// whether it was let through), whatever its setting, bounded to
// MaxReached a server. It is what `status`, the card and Pin to these
// read.
//
// It is kept in a small file per server in the state folder
// (network/NAME.json), not in the state file: the state file is the
// person's decisions, and every write of it is read again by every
// process (the app, its window, each bridge), which work out every
// server's roots anew; a server that connects all day would make that
// happen every second. A record is an observation, written by whoever
// observes the server (the app for a managed server, the bridge for a
// bridged one) at most once a second while it changes (NetworkRecorder),
// merged under a lock of its own so that two bridges of one server add
// up, and read by whoever shows it (RunNetwork publishes each change in
// the snapshot, Snapshot.Network). It lives in the state folder, which no
// confined server reaches, so a server cannot write its own record.

// MaxReached bounds the destinations a server's record keeps; past it the
// one reached longest ago goes.
const MaxReached = 256

// Reached is one destination in a server's record.
type Reached struct {
	// Dest is the destination as a person recognises it (NetContact.Dest):
	// "api.tavily.com:443", "203.0.113.7:443", "unix:/run/x.sock", or for
	// a name looked up and refused "x.example.com:*".
	Dest string `json:"dest"`
	// Proto is "tcp", "unix" or "dns" (a lookup refused: nothing reached).
	Proto string `json:"proto"`
	// Name is the name the server looked up, when Rootkeeper's resolver
	// answered it; Address and Port where it was reached last (TCP).
	Name    string `json:"name,omitempty"`
	Address string `json:"address,omitempty"`
	Port    int    `json:"port,omitempty"`
	// First and Last are when it was first and last contacted; Count how
	// often, Refused how many of those were refused.
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
	Count   int       `json:"count"`
	Refused int       `json:"refused,omitempty"`
	// Allowed says whether its last contact was let through.
	Allowed bool `json:"allowed"`
}

// NetworkRecord is a server's record, the most recent destination first.
type NetworkRecord struct {
	Server       string    `json:"server"`
	Destinations []Reached `json:"destinations"`
}

// Used are the destinations the record's server was let through to (its
// connects, not its refused lookups), in order: what Pin to these
// allows.
func (r NetworkRecord) Used() []string {
	var out []string
	for _, d := range r.Destinations {
		if d.Proto != ProtoLookup && d.Count > d.Refused && !slices.Contains(out, d.Dest) {
			out = append(out, d.Dest)
		}
	}
	return out
}

// Text is d as a person reads it: "api.tavily.com:443 (203.0.113.7)
// allowed, 12 times, first 2026-11-21 10:00:00, last 3 min ago".
func (d Reached) Text(now time.Time) string {
	what := d.Dest
	if d.Name != "" && d.Address != "" {
		what += " (" + d.Address + ")"
	}
	state := "allowed"
	switch {
	case d.Proto == ProtoLookup:
		state = "lookup refused"
	case !d.Allowed:
		state = "refused"
	}
	times := "once"
	if d.Count != 1 {
		times = strconv.Itoa(d.Count) + " times"
	}
	if d.Refused > 0 && d.Refused < d.Count {
		times += " (" + strconv.Itoa(d.Refused) + " refused)"
	}
	return words.SafeText(what + " " + state + ", " + times + ", first " + d.First.Local().Format("2006-01-02 15:04:05") +
		", last " + agoText(now.Sub(d.Last)) + " ago")
}

// agoText is how long ago something was, as a person says it: "12 s",
// "3 min", "5 h", "2 d".
func agoText(d time.Duration) string {
	switch d = max(d, 0); {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + " s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 24*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + " h"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + " d"
}

// networkDir is where the records are, in the state folder.
const networkDir = "network"

// NetworkRecordPath is server name's record in stateDir:
// network/NAME.json, NAME written as its data folder's (ServerDataFolder).
func NetworkRecordPath(stateDir, name string) (string, error) {
	data, err := ServerDataFolder(stateDir, name)
	if err != nil {
		return "", err
	}
	return filepath.Join(stateDir, networkDir, filepath.Base(data)+".json"), nil
}

// ReadNetworkRecord reads server name's record from stateDir; a record
// never written is empty.
func ReadNetworkRecord(stateDir, name string) (NetworkRecord, error) {
	rec := NetworkRecord{Server: name}
	path, err := NetworkRecordPath(stateDir, name)
	if err != nil {
		return rec, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return NetworkRecord{Server: name}, err
	}
	rec.Server = name
	return rec, nil
}

// merge adds what a process saw since its last write (delta, by Dest) to
// rec, and bounds it.
func (r *NetworkRecord) merge(delta map[string]*Reached) {
	for _, d := range delta {
		i := slices.IndexFunc(r.Destinations, func(x Reached) bool { return x.Dest == d.Dest })
		if i < 0 {
			r.Destinations = append(r.Destinations, *d)
			continue
		}
		x := &r.Destinations[i]
		if d.First.Before(x.First) {
			x.First = d.First
		}
		if !d.Last.Before(x.Last) {
			x.Last, x.Allowed, x.Name, x.Proto = d.Last, d.Allowed, d.Name, d.Proto
			if d.Address != "" {
				x.Address, x.Port = d.Address, d.Port
			}
		}
		x.Count += d.Count
		x.Refused += d.Refused
	}
	slices.SortStableFunc(r.Destinations, func(a, b Reached) int {
		if c := b.Last.Compare(a.Last); c != 0 {
			return c
		}
		return strings.Compare(a.Dest, b.Dest)
	})
	if len(r.Destinations) > MaxReached {
		r.Destinations = slices.Clip(r.Destinations[:MaxReached])
	}
}

// A NetworkRecorder keeps one server's record as its contacts are decided:
// Note is cheap (a map under a lock); what it noted is written at most
// once per Every (default a second), in the background, merged into the
// file under its lock, and told to OnWrite. Close (or Flush) writes what
// is left: its owner calls it before it ends.
type NetworkRecorder struct {
	StateDir string
	Server   string
	Every    time.Duration
	// OnWrite, when set, gets the record as written (the app publishes it
	// in its snapshot at once).
	OnWrite func(NetworkRecord)
	// OnError, when set, gets a write that failed.
	OnError func(error)

	mu      sync.Mutex
	pending map[string]*Reached
	timer   *time.Timer // the write to come, while one is armed
	last    time.Time   // the last write
	writing sync.Mutex  // held while a write is under way
}

// SetHooks replaces OnWrite and OnError (a recorder kept across runs of
// its server, each with a core of its own).
func (n *NetworkRecorder) SetHooks(onWrite func(NetworkRecord), onError func(error)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.OnWrite, n.OnError = onWrite, onError
}

// Note records contact c at at, let through or not.
func (n *NetworkRecorder) Note(c NetContact, allowed bool, at time.Time) {
	dest := c.Dest()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pending == nil {
		n.pending = map[string]*Reached{}
	}
	d, ok := n.pending[dest]
	if !ok {
		if len(n.pending) >= MaxReached {
			// A flood between two writes: the record keeps the
			// MaxReached most recent anyway.
			n.evictOldest()
		}
		d = &Reached{Dest: dest, First: at}
		n.pending[dest] = d
	}
	d.Proto, d.Name, d.Last, d.Allowed = c.Proto, strings.TrimSuffix(c.Name, "."), at, allowed
	if c.Proto == ProtoTCP {
		d.Address, d.Port = c.Addr.Addr().Unmap().String(), int(c.Addr.Port())
	}
	d.Count++
	if !allowed {
		d.Refused++
	}
	if n.timer != nil {
		return
	}
	every := n.Every
	if every <= 0 {
		every = time.Second
	}
	n.timer = time.AfterFunc(max(0, every-time.Since(n.last)), n.Flush)
}

// evictOldest forgets the pending destination noted longest ago; n.mu is
// held.
func (n *NetworkRecorder) evictOldest() {
	var oldest *Reached
	for _, d := range n.pending {
		if oldest == nil || d.Last.Before(oldest.Last) {
			oldest = d
		}
	}
	if oldest != nil {
		delete(n.pending, oldest.Dest)
	}
}

// Flush writes what was noted now.
func (n *NetworkRecorder) Flush() {
	n.writing.Lock()
	defer n.writing.Unlock()
	n.mu.Lock()
	delta := n.pending
	if n.timer != nil {
		n.timer.Stop() // written now, not when it was armed for
	}
	n.pending, n.timer, n.last = nil, nil, time.Now()
	onWrite, onError := n.OnWrite, n.OnError
	n.mu.Unlock()
	if len(delta) == 0 || n.StateDir == "" {
		return
	}
	rec, err := addToRecord(n.StateDir, n.Server, delta)
	if err != nil {
		if onError != nil {
			onError(err)
		}
		return
	}
	if onWrite != nil {
		onWrite(rec)
	}
}

// Close writes what is left now.
func (n *NetworkRecorder) Close() { n.Flush() }

// addToRecord merges delta into server's record file, under the records'
// lock, and returns the record written.
func addToRecord(stateDir, server string, delta map[string]*Reached) (NetworkRecord, error) {
	path, err := NetworkRecordPath(stateDir, server)
	if err != nil {
		return NetworkRecord{}, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return NetworkRecord{}, err
	}
	var rec NetworkRecord
	err = withRecordLock(filepath.Dir(path), func() error {
		var err error
		rec, err = ReadNetworkRecord(stateDir, server)
		if err != nil {
			rec = NetworkRecord{Server: server} // unreadable: begun again
		}
		rec.merge(delta)
		data, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return err
		}
		return atomicfile.Write(path, append(data, '\n'), atomicfile.Options{})
	})
	return rec, err
}

// RemoveNetworkRecord deletes server name's record (RemoveServerFiles).
func RemoveNetworkRecord(stateDir, name string) error {
	path, err := NetworkRecordPath(stateDir, name)
	if err != nil {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// SetNetworkRecord publishes rec (its server's record as written) in the
// snapshot.
func (c *Core) SetNetworkRecord(rec NetworkRecord) {
	c.publish(func(s *Snapshot) bool {
		old, had := s.Network[rec.Server]
		if had && reflect.DeepEqual(old, rec) || !had && len(rec.Destinations) == 0 {
			return false
		}
		next := make(map[string]NetworkRecord, len(s.Network)+1)
		for k, v := range s.Network {
			next[k] = v
		}
		if len(rec.Destinations) == 0 {
			delete(next, rec.Server)
		} else {
			next[rec.Server] = rec
		}
		s.Network = next
		s.NetworkGen++
		return true
	})
}

// RunNetwork keeps the snapshot's records (Snapshot.Network) as the files
// in the state folder say, until ctx ends: every record at once, then each
// one that changes (written by this process, a bridge, or removed with its
// server). The app and its window run it; `status` reads the files
// itself.
func (c *Core) RunNetwork(ctx context.Context) error {
	dir := filepath.Join(c.store.Dir(), networkDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	w, err := fsnotify.NewWatcher()
	if err == nil {
		if err = w.Add(dir); err != nil {
			w.Close()
		}
	}
	if err != nil {
		return c.pollNetwork(ctx)
	}
	defer w.Close()
	c.loadNetwork()
	var quiet <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-w.Events:
			if !ok {
				return nil
			}
			if quiet == nil {
				quiet = time.After(100 * time.Millisecond) // a write is a create and a rename
			}
		case <-w.Errors:
			c.loadNetwork()
		case <-quiet:
			quiet = nil
			c.loadNetwork()
		}
	}
}

func (c *Core) pollNetwork(ctx context.Context) error {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		c.loadNetwork()
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// loadNetwork reads the record of every configured server and publishes
// the ones that changed.
func (c *Core) loadNetwork() {
	snap := c.Snapshot()
	recs := map[string]NetworkRecord{}
	for _, srv := range snap.State.Servers {
		if rec, err := ReadNetworkRecord(c.store.Dir(), srv.Name); err == nil && len(rec.Destinations) > 0 {
			recs[srv.Name] = rec
		}
	}
	c.publish(func(s *Snapshot) bool {
		if reflect.DeepEqual(s.Network, recs) || len(s.Network) == 0 && len(recs) == 0 {
			return false
		}
		s.Network = recs
		s.NetworkGen++
		return true
	})
}

// NetworkRecordOf is server's record in snap, read from stateDir when the
// snapshot has none (outside a running app).
func NetworkRecordOf(snap *Snapshot, server, stateDir string) NetworkRecord {
	if rec, ok := snap.Network[server]; ok || snap.Network != nil || stateDir == "" {
		if !ok {
			rec.Server = server
		}
		return rec
	}
	rec, _ := ReadNetworkRecord(stateDir, server)
	return rec
}
