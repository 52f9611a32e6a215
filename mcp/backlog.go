package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// BacklogLimits bound a stdio server's backlog: the requests it sent that
// have not been answered yet, an answer counting as given once it is
// written to the server's stdin. A server that asks faster than it reads
// the answers (or never reads them) would otherwise have Rootkeeper hold
// every request it read, each with its handler and its answer, without end.
type BacklogLimits struct {
	// Requests and Bytes bound the backlog (defaults 64 requests and 32
	// MiB of their messages): while either is reached, the server's stdout
	// is not read, so that it waits to write until answers drain.
	Requests int
	Bytes    int
	// Stall is how long the backlog may stay full with no answer drained
	// before the server is stopped as hostile (default 10 s): it asks and
	// does not read, and nothing it sends can be read any more.
	Stall time.Duration
}

// withDefaults fills the zero fields of l.
func (l BacklogLimits) withDefaults() BacklogLimits {
	if l.Requests <= 0 {
		l.Requests = 64
	}
	if l.Bytes <= 0 {
		l.Bytes = 32 << 20
	}
	if l.Stall <= 0 {
		l.Stall = 10 * time.Second
	}
	return l
}

// HostileError is why a server was stopped as hostile: its backlog stayed
// full for the whole stall limit.
type HostileError struct {
	Requests int           // requests in the backlog
	Bytes    int           // their size
	Stalled  time.Duration // how long no answer drained
}

func (e *HostileError) Error() string {
	return fmt.Sprintf("hostile: it sent %d requests (%d KiB) and read none of their answers for %v (restart it to try again)",
		e.Requests, (e.Bytes+1023)>>10, e.Stalled.Round(100*time.Millisecond))
}

// IsHostile reports whether err says a server was stopped as hostile.
func IsHostile(err error) bool {
	var h *HostileError
	return errors.As(err, &h)
}

// Backlog counts one server connection's unanswered requests against its
// limits. One goroutine reads (Wait, then Add); any goroutine may Drain.
type Backlog struct {
	limits BacklogLimits

	mu       sync.Mutex
	requests int
	bytes    int
	drained  chan struct{} // signalled (buffered 1) at every Drain
}

// NewBacklog returns an empty backlog with limits (zero fields take the
// defaults).
func NewBacklog(limits BacklogLimits) *Backlog {
	return &Backlog{limits: limits.withDefaults(), drained: make(chan struct{}, 1)}
}

// Limits are the backlog's limits, defaults filled in.
func (b *Backlog) Limits() BacklogLimits { return b.limits }

// Add counts a request of size bytes that was read.
func (b *Backlog) Add(size int) {
	b.mu.Lock()
	b.requests++
	b.bytes += size
	b.mu.Unlock()
}

// Drain counts the answer to a request of size bytes as given.
func (b *Backlog) Drain(size int) {
	b.mu.Lock()
	b.requests--
	b.bytes -= size
	b.mu.Unlock()
	select {
	case b.drained <- struct{}{}:
	default:
	}
}

// Len is the number of requests in the backlog and their size.
func (b *Backlog) Len() (requests, bytes int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.requests, b.bytes
}

func (b *Backlog) full() (bool, int, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.requests >= b.limits.Requests || b.bytes >= b.limits.Bytes, b.requests, b.bytes
}

// Wait returns once there is room for another request: at once while the
// backlog is below its limits, else when answers drain. It returns a
// *HostileError when no answer drained for the stall limit while it was
// full, ctx's error when ctx ends, and io.EOF once closed is closed.
func (b *Backlog) Wait(ctx context.Context, closed <-chan struct{}) error {
	var stall *time.Timer
	for {
		full, n, size := b.full()
		if !full {
			return nil
		}
		if stall == nil {
			// A drain signalled before this wait is no news: take it, and
			// look again.
			select {
			case <-b.drained:
				continue
			default:
			}
			stall = time.NewTimer(b.limits.Stall)
			defer stall.Stop()
		}
		select {
		case <-b.drained:
			// An answer drained: the server reads. Its time starts again.
			stall.Reset(b.limits.Stall)
		case <-stall.C:
			return &HostileError{Requests: n, Bytes: size, Stalled: b.limits.Stall}
		case <-ctx.Done():
			return ctx.Err()
		case <-closed:
			return io.EOF
		}
	}
}
