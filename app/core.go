package app

import (
	"bytes"
	"context"
	"maps"
	"reflect"
	"rootkeeper/app/policy"
	"slices"
	"sync"
	"sync/atomic"
)

// NoticeCorrupt is the notice topic of a state file moved aside.
const NoticeCorrupt = "state-file"

// Core is the live hub of a running app: it owns the current Snapshot, applies
// changes through the Store, and tells subscribers when anything changed.
// All methods are safe for concurrent use; none blocks on a subscriber.
type Core struct {
	store *Store

	mu   sync.Mutex // serialises building and publishing snapshots
	snap atomic.Pointer[Snapshot]
	subs map[chan struct{}]struct{}
}

// NewCore loads the state from store and publishes the first snapshot. A
// corrupt state file becomes a notice, not an error.
func NewCore(store *Store) (*Core, error) {
	c := &Core{store: store, subs: map[chan struct{}]struct{}{}}
	c.snap.Store(&Snapshot{State: State{Version: StateVersion}, Policy: Policy()})
	store.OnCorrupt = c.noteCorrupt
	// The state as loaded, with its bytes, whatever it holds: nobody has
	// subscribed yet.
	_, err := store.load(func(st State, data []byte) {
		c.publish(func(s *Snapshot) bool {
			s.State, s.stateData = st, data
			s.StateGen++
			return true
		})
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Core) noteCorrupt(e *CorruptError) { c.SetNotice(NoticeCorrupt, e.Error()) }

// SetPolicy applies the organisation's policy p from now on (SetPolicy)
// and publishes it: every server's visible set is worked out again under
// it.
func (c *Core) SetPolicy(p policy.Policy) {
	SetPolicy(p)
	c.publish(func(s *Snapshot) bool {
		s.Policy = p
		s.PolicyGen++
		return true
	})
}

// Store is the store the core saves to.
func (c *Core) Store() *Store { return c.store }

// Snapshot is the current snapshot. Callers must not modify it.
func (c *Core) Snapshot() *Snapshot { return c.snap.Load() }

// Update applies fn to the state, saves it, and publishes the result. fn sees
// the state as it is on disk (another process may have changed it). If fn
// fails nothing changes.
//
// The new state is published as soon as fn has succeeded, while the file is
// still being written and synced: a decision takes effect without waiting
// for the disk (an fsync costs milliseconds, sometimes tens), and a
// revocation reaches servers sooner. Should the write fail, the state on
// disk is published again, so the app never runs on a state it did not
// save.
//
// Every state is published under the state file's lock, by Update and
// Reload alike, so publishes happen in the order of the file's versions: a
// reload that read the file before a revoke cannot publish that older state
// after the revoke (which would show the revoked root again).
func (c *Core) Update(fn func(*State) error) error {
	_, err := c.store.update(fn, c.setState)
	return err
}

// Reload reads the state file again, publishing it if it differs: how a
// change written by another process (the command line) reaches the app.
func (c *Core) Reload() error {
	_, err := c.store.load(c.setState)
	return err
}

// setState publishes st, read from or saved as the bytes data (nil when
// not known), unless it is the state published already: the same bytes as
// its own, or, when either is not known, deeply equal. Comparing the bytes
// a save encodes anyway costs a grant to fifty servers a memcmp where
// reflect.DeepEqual walked every server.
func (c *Core) setState(st State, data []byte) {
	c.publish(func(s *Snapshot) bool {
		if s.stateData != nil && data != nil {
			if bytes.Equal(s.stateData, data) {
				return false
			}
		} else if reflect.DeepEqual(s.State, st) {
			return false
		}
		s.State, s.stateData = st, data
		s.StateGen++
		return true
	})
}

// DropUntilQuit forgets the decisions scoped until quit; the long-running app
// calls it once at start.
func (c *Core) DropUntilQuit() error {
	return c.Update(func(s *State) error { s.DropUntilQuit(); return nil })
}

// SetHealth records the result of an access check of the root at path.
func (c *Core) SetHealth(path string, h Health) {
	c.publish(func(s *Snapshot) bool {
		old, had := s.Health[path]
		if had && old.Status == h.Status && old.Err == h.Err && old.Branch == h.Branch && old.MovedTo == h.MovedTo {
			return false
		}
		s.Health = maps.Clone(s.Health)
		if s.Health == nil {
			s.Health = map[string]Health{}
		}
		s.Health[path] = h
		s.HealthGen++
		return true
	})
}

// SetServerStatus records the live status of a server's connection.
func (c *Core) SetServerStatus(name string, st ServerStatus) {
	c.SetServerStatuses(map[string]ServerStatus{name: st})
}

// SetServerStatuses records several servers' statuses in one snapshot: a
// change that reaches fifty servers at once then costs one publish, not
// fifty.
func (c *Core) SetServerStatuses(statuses map[string]ServerStatus) {
	c.publish(func(s *Snapshot) bool {
		changed := false
		for name, st := range statuses {
			if old, ok := s.Servers[name]; ok && old.Equal(st) {
				continue
			}
			if !changed {
				s.Servers = maps.Clone(s.Servers)
				if s.Servers == nil {
					s.Servers = map[string]ServerStatus{}
				}
				changed = true
			}
			s.Servers[name] = st
		}
		if changed {
			s.ServersGen++
		}
		return changed
	})
}

// ClearServerStatus forgets the live status of a server that was removed.
func (c *Core) ClearServerStatus(name string) {
	c.publish(func(s *Snapshot) bool {
		if _, ok := s.Servers[name]; !ok {
			return false
		}
		s.Servers = maps.Clone(s.Servers)
		delete(s.Servers, name)
		s.ServersGen++
		return true
	})
}

// SetNotice sets (or, with an empty msg, clears) the notice on topic.
func (c *Core) SetNotice(topic, msg string) {
	c.publish(func(s *Snapshot) bool {
		if s.Notices[topic] == msg {
			return false
		}
		s.Notices = maps.Clone(s.Notices)
		if s.Notices == nil {
			s.Notices = map[string]string{}
		}
		if msg == "" {
			delete(s.Notices, topic)
		} else {
			s.Notices[topic] = msg
		}
		s.NoticesGen++
		return true
	})
}

// publish builds the next snapshot from a shallow copy of the current one.
// edit replaces what it changes (copy on write), so published snapshots are
// never touched again, and reports whether it changed anything; nothing is
// published when it did not.
func (c *Core) publish(edit func(*Snapshot) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.snap.Load()
	next := *cur
	if !edit(&next) {
		return
	}
	next.Seq = cur.Seq + 1
	if !SameRule(cur, &next) || next.vis == nil {
		next.vis = new(visCell) // the index is of other inputs
	}
	c.snap.Store(&next)
	for ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default: // a signal is already waiting; it covers this change too
		}
	}
}

// Subscribe returns a channel that receives a signal after each change (a
// burst of changes may arrive as one signal: read Snapshot for the latest),
// and a function that ends the subscription.
func (c *Core) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	c.mu.Lock()
	c.subs[ch] = struct{}{}
	c.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			c.mu.Lock()
			delete(c.subs, ch)
			c.mu.Unlock()
		})
	}
}

// Run watches the state file and reloads it when another process changes it,
// until ctx ends.
func (c *Core) Run(ctx context.Context) error {
	return c.store.Watch(ctx, func() {
		if err := c.Reload(); err != nil {
			c.SetNotice("reload", "could not reload the state file: "+err.Error())
		} else {
			c.SetNotice("reload", "")
		}
	})
}

// ServerNames lists the configured servers' names in order.
func (s *Snapshot) ServerNames() []string {
	names := make([]string, len(s.State.Servers))
	for i, srv := range s.State.Servers {
		names[i] = srv.Name
	}
	return slices.Clip(names)
}
