package mcp

import "sync"

// Background is the work a server's watches start in the background (a
// request written for a person who was not there), which its owner waits
// for before it ends (Manager.Run, the bridge). Once the owner waits,
// nothing new starts: a sync.WaitGroup forbids an Add racing its Wait,
// and a server's observer may still be deciding a call while its owner
// stops.
type Background struct {
	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup
}

// Go runs f in a goroutine of its own unless the owner has begun waiting;
// it reports whether f runs.
func (b *Background) Go(f func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return false
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		f()
	}()
	return true
}

// Wait stops anything new from starting and waits for what runs.
func (b *Background) Wait() {
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
	b.wg.Wait()
}
