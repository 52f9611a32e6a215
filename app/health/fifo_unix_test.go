//go:build unix

package health

import (
	"os"
	"path/filepath"
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
