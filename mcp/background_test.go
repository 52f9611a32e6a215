package mcp

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestBackgroundStartsNothingOnceWaited: work started races the owner's
// Wait (under -race a WaitGroup's Add racing its Wait is reported), what
// started is waited for, and nothing starts after.
func TestBackgroundStartsNothingOnceWaited(t *testing.T) {
	var b Background
	var started, finished atomic.Int32
	var callers sync.WaitGroup
	for range 100 {
		callers.Add(1)
		go func() {
			defer callers.Done()
			if b.Go(func() { finished.Add(1) }) {
				started.Add(1)
			}
		}()
	}
	b.Wait()
	done := finished.Load()
	callers.Wait()
	if s := started.Load(); done > s || finished.Load() != s {
		t.Errorf("%d started, %d finished by Wait, %d in all", s, done, finished.Load())
	}
	if b.Go(func() {}) {
		t.Error("work started after Wait")
	}
}
