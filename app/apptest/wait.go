package apptest

import (
	"testing"
	"time"

	"rootkeeper/app"
)

// Patience is how long Eventually and Until wait before they conclude that
// what they wait for will never come. It guards against a hang; it is no
// measure of speed: far longer than anything here takes on a loaded
// machine, so that it fails only a test that would never pass. Speed is
// measured by benchmarks.
const Patience = 30 * time.Second

// Eventually waits until cond reports done, for what has no event to wait
// on (another process, a file, a server's answer): it asks cond again and
// again, at intervals growing to 50 ms. When Patience passes first it fails
// the test, saying what it waited for and cond's last word (state) on it.
// cond runs on the test's goroutine: it may fail the test itself (a
// process it waits on that ended).
func Eventually(t testing.TB, what string, cond func() (done bool, state string)) {
	t.Helper()
	Poll{}.Eventually(t, what, cond)
}

// Poll is Eventually for the waits that need another bound or another
// pace. Its zero value is Eventually's.
type Poll struct {
	// Within bounds the wait (Patience when zero): longer for what is
	// known to take longer than Patience allows (a Windows program under
	// Wine, 20 servers starting), shorter for what must come soon.
	Within time.Duration
	// Every caps the pause between two looks (50 ms when zero): shorter in
	// a benchmark that times what it waits for, longer where one look is
	// itself costly (a process run for each).
	Every time.Duration
}

// Eventually waits until cond reports done, as the package's Eventually
// does, within p's bound and at p's pace.
func (p Poll) Eventually(t testing.TB, what string, cond func() (done bool, state string)) {
	t.Helper()
	within, every := p.Within, p.Every
	if within <= 0 {
		within = Patience
	}
	if every <= 0 {
		every = 50 * time.Millisecond
	}
	deadline := time.Now().Add(within)
	pause := min(time.Millisecond, every)
	for {
		done, state := cond()
		if done {
			return
		}
		if time.Now().After(deadline) {
			if state != "" {
				t.Fatalf("%s: not so after %v (hung?); last seen: %s", what, within, state)
			}
			t.Fatalf("%s: not so after %v (hung?)", what, within)
		}
		time.Sleep(pause)
		pause = min(2*pause, every)
	}
}

// Until waits until cond holds for core's snapshot and returns that
// snapshot. It looks again after each change the core publishes, not on a
// timer. When Patience passes first it fails the test, saying what it
// waited for.
func Until(t testing.TB, core *app.Core, what string, cond func(*app.Snapshot) bool) *app.Snapshot {
	t.Helper()
	changed, unsubscribe := core.Subscribe()
	defer unsubscribe()
	hung := time.NewTimer(Patience)
	defer hung.Stop()
	for {
		// Subscribed first, then looked: a change between the two is
		// signalled, not lost.
		if snap := core.Snapshot(); cond(snap) {
			return snap
		}
		select {
		case <-changed:
		case <-hung.C:
			t.Fatalf("%s: not so after %v (hung?)", what, Patience)
		}
	}
}
