package mcp

import (
	"sync"
	"sync/atomic"

	"rootkeeper/app/audit"
)

// maxUnaskedWrites bounds the requests a watch writes at once for a
// person who is not there; the limiter keeps them few anyway.
const maxUnaskedWrites = 4

// unaskedRequests raises requests for a person who is not there, for a
// watch (ReachWatch: a folder's; NetWatch: a destination's): the attempt
// is refused at once and its request written to the state in the
// background, so that the call is not held by the state file's write. It
// keeps the keys whose request is being written: until the write reaches
// the snapshot, a second attempt on the same key finds no request there,
// and must be refused as on a request asked before, not raise it again.
// The zero value is ready.
type unaskedRequests struct {
	writes  atomic.Int32 // being written, at most maxUnaskedWrites
	mu      sync.Mutex
	writing map[string]bool // keys being written (under mu)
}

// raise raises the request for key, on which the snapshot has none open:
// unless one is being written already, and allow (the limiter) lets it,
// write is run in the background in pending. It returns what the
// attempt's audit entry says: audit.ReachUnasked, with request true when
// the write was started (false: dropped, too many at once or pending's
// owner ending); audit.ReachLimited; or audit.ReachRefused when the
// request for key is being written.
func (u *unaskedRequests) raise(key string, allow func() bool, pending *Background, write func()) (decided string, request bool) {
	u.mu.Lock()
	if u.writing[key] {
		u.mu.Unlock()
		return audit.ReachRefused, false
	}
	if u.writing == nil {
		u.writing = map[string]bool{}
	}
	u.writing[key] = true
	u.mu.Unlock()
	if !allow() {
		u.done(key)
		return audit.ReachLimited, false
	}
	if u.writes.Add(1) > maxUnaskedWrites {
		u.writes.Add(-1)
		u.done(key)
		return audit.ReachUnasked, false
	}
	if !pending.Go(func() {
		defer u.done(key)
		defer u.writes.Add(-1)
		write()
	}) {
		u.writes.Add(-1)
		u.done(key)
		return audit.ReachUnasked, false
	}
	return audit.ReachUnasked, true
}

// done forgets that key's request is being written.
func (u *unaskedRequests) done(key string) {
	u.mu.Lock()
	delete(u.writing, key)
	u.mu.Unlock()
}
