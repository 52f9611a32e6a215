package health

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// A check that does not finish (a dead network mount; here a check held in
// the test hook) counts as unreadable once CheckTimeout has passed: the
// root is withdrawn, never left ok. More stuck roots than workers do not
// stop a deleted root from being withdrawn. Checked again while its check
// is still stuck, a root is unreadable at once: no second check blocks
// beside the first.
func TestStuckCheckFailsClosed(t *testing.T) {
	core := newCore(t)
	tree := t.TempDir()
	var hung []string
	for i := range workers + 1 {
		hung = append(hung, mkdir(t, tree, "hung-"+string(rune('a'+i))))
	}
	plain := mkdir(t, tree, "plain")
	addPaths(t, core, append(hung, plain)...)
	release := make(chan struct{})
	defer close(release)
	stuck := make(chan struct{})
	counter := &checkCounter{}
	m := NewMonitor(core, Options{CheckTimeout: 300 * time.Millisecond})
	m.onCheck = func(path string) {
		counter.hook(path)
		if strings.Contains(path, "hung-") {
			select {
			case <-stuck: // the mount died after the first round of checks
				<-release
			default:
			}
		}
	}
	start(t, m)
	for _, p := range append(hung, plain) {
		waitStatus(t, core, p, app.HealthOK)
	}
	close(stuck)
	// The mount dies: every later check of a hung root blocks. Each is
	// checked again (nothing else would look before the minute's sweep),
	// all at once, and each check counts as unreadable.
	ctx, cancel := context.WithTimeout(context.Background(), apptest.Patience)
	defer cancel()
	var wg sync.WaitGroup
	got := make([]app.Health, len(hung))
	errs := make([]error, len(hung))
	for i, p := range hung {
		wg.Go(func() { got[i], errs[i] = m.Check(ctx, p) })
	}
	wg.Wait()
	for i, p := range hung {
		h := got[i]
		if errs[i] != nil {
			t.Fatalf("%s: Check: %v", p, errs[i])
		}
		if h.Status != app.HealthUnreadable || !strings.Contains(h.Err, "did not finish") {
			t.Errorf("%s: checked while stuck: %+v, want unreadable, saying the check did not finish", p, h)
		}
		if now := core.Snapshot().Health[p]; now.Status != app.HealthUnreadable {
			t.Errorf("%s: published %+v after its check, want unreadable", p, now)
		}
		if contains(visible(core), p) {
			t.Errorf("%s is still visible with a stuck check", p)
		}
	}
	if err := os.RemoveAll(plain); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, core, plain, app.HealthMissing)
	// Checked again while still stuck: unreadable, and its check was not
	// run again (it would only block beside the first).
	before := counter.get(hung[0])
	if h := check(t, m, hung[0]); h.Status != app.HealthUnreadable || !strings.Contains(h.Err, "did not finish") {
		t.Errorf("a root still stuck, checked again: %+v, want unreadable", h)
	}
	if n := counter.get(hung[0]) - before; n != 0 {
		t.Errorf("a root still stuck was checked %d more times beside its stuck check", n)
	}
}
