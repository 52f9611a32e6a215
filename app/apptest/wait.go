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
func Eventually(t testing.TB, what string, cond func() (done bool, state string)) {
	t.Helper()
	deadline := time.Now().Add(Patience)
	pause := time.Millisecond
	for {
		done, state := cond()
		if done {
			return
		}
		if time.Now().After(deadline) {
			if state != "" {
				t.Fatalf("%s: not so after %v (hung?); last seen: %s", what, Patience, state)
			}
			t.Fatalf("%s: not so after %v (hung?)", what, Patience)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
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
