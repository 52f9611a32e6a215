package health

import (
	"os"
	"strings"
	"testing"
	"time"

	"rootkeeper/app"
)

// A check that does not finish (a dead network mount; here a check held in
// the test hook) counts as unreadable once CheckTimeout has passed: the
// root is withdrawn, never left ok. More stuck roots than workers do not
// stop a deleted root from being withdrawn.
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
	m := NewMonitor(core, Options{CheckTimeout: 300 * time.Millisecond})
	m.onCheck = func(path string) {
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
	// The mount dies: every later check of a hung root blocks.
	for _, p := range hung {
		m.CheckNow(p)
	}
	for _, p := range hung {
		h := waitStatus(t, core, p, app.HealthUnreadable)
		if !strings.Contains(h.Err, "did not finish") {
			t.Errorf("%s: error %q does not say the check timed out", p, h.Err)
		}
		if contains(visible(core), p) {
			t.Errorf("%s is still visible with a stuck check", p)
		}
	}
	if err := os.RemoveAll(plain); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, core, plain, app.HealthMissing)
	// Checked again while still stuck, a hung root stays unreadable at once.
	m.CheckNow(hung[0])
	time.Sleep(100 * time.Millisecond)
	if h := core.Snapshot().Health[hung[0]]; h.Status != app.HealthUnreadable {
		t.Errorf("a root still stuck became %s", h.Status)
	}
}
