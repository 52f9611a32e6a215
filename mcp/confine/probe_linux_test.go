package confine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"rootkeeper/app/apptest"
)

// told is an attempt as Reach was told it, and whether anybody still
// waited for the answer then.
type told struct {
	a       Attempt
	waiting bool
}

// probeReach is a Reach that holds every attempt on a path under dir
// that does not exist until release is closed, whatever its context says
// (a Reach slower than it should be), and answers the others at once;
// each attempt is sent to seen as it comes.
func probeReach(dir string, release chan struct{}, seen chan<- told) Reach {
	return func(ctx context.Context, a Attempt) string {
		if !strings.HasPrefix(a.Path, dir) {
			return ""
		}
		seen <- told{a: a, waiting: ctx.Err() == nil}
		if _, err := os.Lstat(a.Path); err != nil {
			<-release
		}
		return ""
	}
}

// startProbing runs nosy -try ops observed under p with reach, and returns
// a channel that gets its results once it has ended.
func startProbing(t *testing.T, p Policy, reach Reach, ops ...string) <-chan []outcome {
	t.Helper()
	cmd := exec.Command(nosy(t), append([]string{"-try"}, ops...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	observed(t, cmd, p, nil, reach) // closed at the test's end, once Reach is let go
	ended := make(chan []outcome, 1)
	go func() {
		err := cmd.Wait()
		if err != nil {
			t.Errorf("%v: %v; stderr: %s", cmd.Args, err, stderr.String())
		}
		ended <- outcomes(t, &stdout)
	}()
	return ended
}

// TestObserverLetsProbesGoOn: a read or listing of a path past the
// ruleset that is not there (a runtime probing for a config file) fails
// as it would unconfined without waiting for Reach, which hears of it
// afterwards with nobody waiting; a read of a file that is there still
// waits for Reach's answer.
func TestObserverLetsProbesGoOn(t *testing.T) {
	needLandlock(t)
	base, root, outside := rootAndOutside(t)
	there := filepath.Join(outside, "there.txt")
	os.WriteFile(there, []byte("T"), 0o600)
	missing, missingDir := filepath.Join(outside, "missing.json"), filepath.Join(outside, "no", "such")
	hold := make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	defer release()
	seen := make(chan told, 16)
	p := Policy{Roots: []string{root}, Temp: filepath.Join(base, "tmp")}
	ended := startProbing(t, p, probeReach(outside, hold, seen),
		"read:"+missing, "list:"+missingDir, "read:"+there)

	var res []outcome
	select {
	case res = <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the server's probes waited for Reach")
	}
	release()
	for i, want := range []string{"no such file", "no such file", "permission denied"} {
		if res[i].OK || !strings.Contains(res[i].Err, want) {
			t.Errorf("%s %s: %+v, want it to fail with %q", res[i].Op, res[i].Path, res[i], want)
		}
	}
	got := map[string]told{}
	for range 3 {
		select {
		case s := <-seen:
			got[s.a.Path] = s
		case <-time.After(time.Minute):
			t.Fatalf("Reach was told %d attempts of 3: %+v", len(got), got)
		}
	}
	for _, path := range []string{missing, missingDir} {
		if s, ok := got[path]; !ok || s.waiting {
			t.Errorf("probe of %s: told %v, with a call waiting %v; want told, nobody waiting", path, ok, s.waiting)
		}
	}
	if s := got[there]; !s.waiting || s.a.Op != "read" {
		t.Errorf("read of a file that is there: %+v, want asked while the call waits", s)
	}
}

// TestObserverBoundsProbesNotYetTold: probes come faster than Reach hears
// of them; past maxProbes waiting to be told, a probe's call waits for
// Reach as any attempt, so that a server cannot run ahead of its record
// without bound.
func TestObserverBoundsProbesNotYetTold(t *testing.T) {
	needLandlock(t)
	base, root, outside := rootAndOutside(t)
	var ops []string
	for i := range maxProbes + 8 {
		ops = append(ops, "read:"+filepath.Join(outside, fmt.Sprintf("missing-%d", i)))
	}
	hold := make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	defer release()
	seen := make(chan told, len(ops))
	p := Policy{Roots: []string{root}, Temp: filepath.Join(base, "tmp")}
	ended := startProbing(t, p, probeReach(outside, hold, seen), ops...)

	// The first probe holds the teller; the queue fills behind it; the
	// next probe's call is asked, and waits.
	var waiting, after int
	for waiting == 0 {
		select {
		case s := <-seen:
			if !s.waiting {
				after++
				continue
			}
			waiting++
			select {
			case <-ended:
				t.Fatal("the server ended with a probe's call still waiting for Reach")
			default:
			}
		case res := <-ended:
			t.Fatalf("all %d probes went on while Reach heard of %d of them: %d results", len(ops), after, len(res))
		case <-time.After(time.Minute):
			t.Fatalf("no probe's call waited for Reach (%d told afterwards)", after)
		}
	}
	release()
	var res []outcome
	select {
	case res = <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the server did not end once Reach answered")
	}
	for _, r := range res {
		if r.OK || !strings.Contains(r.Err, "no such file") {
			t.Errorf("%+v, want it to fail as unconfined", r)
		}
	}
	// Every probe is told, the queued ones once the teller is free.
	for after+waiting < len(ops) {
		select {
		case s := <-seen:
			if s.waiting {
				waiting++
			} else {
				after++
			}
		case <-time.After(time.Minute):
			t.Fatalf("Reach was told %d probes of %d", after+waiting, len(ops))
		}
	}
	if after < maxProbes {
		t.Errorf("%d probes were told after their calls went on, want at least %d", after, maxProbes)
	}
}

// TestResolvedUp: a path is resolved in its longest prefix that exists
// and resolves (a dangling symlink does not), and what lies beyond is
// kept as named; a path nothing of which resolves below / comes back
// unchanged but for /.
func TestResolvedUp(t *testing.T) {
	base := apptest.RealTempDir(t)
	real := filepath.Join(base, "real")
	os.MkdirAll(filepath.Join(real, "sub"), 0o755)
	os.WriteFile(filepath.Join(real, "sub", "f.txt"), nil, 0o600)
	os.Symlink(real, filepath.Join(base, "link"))
	os.Symlink(filepath.Join(base, "gone"), filepath.Join(real, "dangling"))
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(base, "link", "sub", "f.txt"), filepath.Join(real, "sub", "f.txt")},
		{filepath.Join(base, "link", "sub", "new.txt"), filepath.Join(real, "sub", "new.txt")},
		{filepath.Join(base, "link", "a", "b", "c.json"), filepath.Join(real, "a", "b", "c.json")},
		{filepath.Join(base, "link", "dangling", "x"), filepath.Join(real, "dangling", "x")},
		{filepath.Join(base, "link", "dangling"), filepath.Join(real, "dangling")},
		{filepath.Join(real, "sub"), filepath.Join(real, "sub")},
	} {
		if got := resolvedUp(tc.path); got != tc.want {
			t.Errorf("resolvedUp(%s) = %s, want %s", tc.path, got, tc.want)
		}
	}
}
