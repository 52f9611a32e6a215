package health

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"rootkeeper/app"
)

// A FIFO where .git/HEAD should be (any repository can hold one) used to
// block a worker forever in open(2). Ten such roots, more than there are
// workers, sit beside a plain root that is then deleted: the FIFO roots are
// checked (they are folders; their branch is unknown), and the deleted root
// is still withdrawn promptly.
func TestFIFOHeadsDoNotBlockTheChecks(t *testing.T) {
	core := newCore(t)
	tree := t.TempDir()
	var fifos []string
	for i := range workers + 2 {
		root := mkdir(t, tree, "fifo-repo-"+string(rune('a'+i)), ".git")
		if err := syscall.Mkfifo(filepath.Join(root, "HEAD"), 0o644); err != nil {
			t.Fatal(err)
		}
		fifos = append(fifos, filepath.Dir(root))
	}
	plain := mkdir(t, tree, "plain")
	addPaths(t, core, append(fifos, plain)...)
	start(t, NewMonitor(core, Options{CheckTimeout: time.Minute}))

	for _, p := range fifos {
		if h := waitStatus(t, core, p, app.HealthOK); h.Branch != "" {
			t.Errorf("%s: branch %q read from a FIFO", p, h.Branch)
		}
	}
	waitStatus(t, core, plain, app.HealthOK)
	if err := os.RemoveAll(plain); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, core, plain, app.HealthMissing)
}

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
