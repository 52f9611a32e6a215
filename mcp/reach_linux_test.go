package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rootkeeper/app"
)

// reachEnv runs nosy managed and confined to root, observed, with the
// person's answers given through the state as the dialog and `grant` give
// them.
func reachEnv(t *testing.T) (e *testEnv, root string) {
	needLandlock(t)
	bin := nosyServer(t)
	e = newEnv(t)
	root = mkRoot(t, "granted")
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: bin, Confine: true})
	})
	e.addRoots(root)
	e.grant("nosy", root)
	opts := e.fastOptions()
	// Longer than a call may take in these tests (wait): a call that waited
	// for an answer nobody gives fails the test instead of passing late.
	opts.ReachWait = 10 * time.Minute
	e.start(opts)
	e.waitConnected("nosy")
	return e, root
}

// tryAsync calls nosy's try in the background.
func tryAsync(t *testing.T, e *testEnv, op, path string) <-chan nosyResult {
	ch := make(chan nosyResult, 1)
	go func() { ch <- nosyTry(t, e, "nosy", op, path) }()
	return ch
}

// waitRequest waits for nosy's open request for folder and returns it.
func waitRequest(t *testing.T, e *testEnv, folder string) app.Request {
	t.Helper()
	var r app.Request
	eventually(t, "a request for "+folder, func() (bool, string) {
		var ok bool
		r, ok = e.core.Snapshot().State.Request("nosy", folder)
		return ok, ""
	})
	return r
}

// TestReachAsksAndAllowOnceWithoutRestart is the first test: a
// confined server that tries a file in a folder it was not given raises a
// request naming that folder; allow once makes the same call succeed with
// no restart (same pid); the next file there asks again; deny is never
// asked again; allow this folder lets later accesses through.
func TestReachAsksAndAllowOnceWithoutRestart(t *testing.T) {
	e, _ := reachEnv(t)
	taxes := mkRoot(t, "taxes")
	os.WriteFile(filepath.Join(taxes, "2025.pdf"), []byte("2025"), 0o600)
	os.WriteFile(filepath.Join(taxes, "2024.pdf"), []byte("2024"), 0o600)
	pid := e.status("nosy").PID

	got := tryAsync(t, e, "read", filepath.Join(taxes, "2025.pdf"))
	r := waitRequest(t, e, taxes)
	if r.From != app.FromReach || r.Tried != filepath.Join(taxes, "2025.pdf") || r.Op != "read" {
		t.Errorf("request %+v", r)
	}
	if txt := app.RequestText(r); !strings.Contains(txt, "nosy tried to read ") || !strings.HasSuffix(txt, "allow "+taxes+"?") {
		t.Errorf("RequestText = %q", txt)
	}
	e.update(func(s *app.State) error { return s.GrantOnce("nosy", taxes, app.ByCommandLine, time.Now().UTC()) })
	if res := <-got; !res.OK || res.Got != "2025" {
		t.Fatalf("allowed once: %+v", res)
	}
	if now := e.status("nosy").PID; now != pid {
		t.Errorf("allow once restarted the server: pid %d, then %d", pid, now)
	}
	if _, decided := e.core.Snapshot().State.Decision("nosy", taxes); decided {
		t.Error("allow once recorded a decision")
	}

	// The next file asks again; deny refuses it, and is never asked again.
	got = tryAsync(t, e, "read", filepath.Join(taxes, "2024.pdf"))
	waitRequest(t, e, taxes)
	e.update(func(s *app.State) error {
		return s.DecideRequest(app.Decision{Server: "nosy", Root: taxes, Verdict: app.Deny, By: app.ByCommandLine})
	})
	if res := <-got; res.OK || !strings.Contains(res.Err, "permission denied") {
		t.Fatalf("denied: %+v", res)
	}
	// Answered at once (else the call would outwait the test's timeout)
	// and not asked again.
	if res := nosyTry(t, e, "nosy", "read", filepath.Join(taxes, "2024.pdf")); res.OK || !strings.Contains(res.Err, "permission denied") {
		t.Fatalf("read after deny: %+v", res)
	}
	if _, open := e.core.Snapshot().State.Request("nosy", taxes); open {
		t.Error("a denied folder was asked about again")
	}
	if e.status("nosy").PID != pid {
		t.Error("the server was restarted")
	}

	// Allow this folder: the waiting call gets the file; later ones too
	// (after the restart the ruleset holds it).
	photos := mkRoot(t, "photos")
	os.WriteFile(filepath.Join(photos, "cat.jpg"), []byte("cat"), 0o600)
	got = tryAsync(t, e, "read", filepath.Join(photos, "cat.jpg"))
	waitRequest(t, e, photos)
	e.update(func(s *app.State) error {
		if err := s.DecideRequest(app.Decision{Server: "nosy", Root: photos, Verdict: app.Allow, By: app.ByCommandLine}); err != nil {
			return err
		}
		e.core.SetHealth(photos, app.Health{Status: app.HealthOK})
		return nil
	})
	if res := <-got; !res.OK || res.Got != "cat" {
		t.Fatalf("allowed folder, the waiting call: %+v", res)
	}
	e.waitRestarted("nosy", pid)
	if res := nosyTry(t, e, "nosy", "read", filepath.Join(photos, "cat.jpg")); !res.OK {
		t.Fatalf("allowed folder, after the restart: %+v", res)
	}
}

// TestReachHostileProber: a confined server probing ten thousand paths in a
// hundred folders raises at most a hundred requests (in fact the limiter's
// handful), and every probe still fails.
func TestReachHostileProber(t *testing.T) {
	e, _ := reachEnv(t)
	base := mkRoot(t, "probed")
	var paths []string
	for d := range 100 {
		dir := filepath.Join(base, "d"+string(rune('a'+d/26))+string(rune('a'+d%26)))
		os.MkdirAll(dir, 0o755)
		for f := range 100 {
			p := filepath.Join(dir, "f"+string(rune('a'+f/26))+string(rune('a'+f%26)))
			os.WriteFile(p, []byte("x"), 0o600)
			paths = append(paths, p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Ten parallel probers; each call waits at most the bound while its
	// folder is asked, so answer every request with deny as it appears.
	go func() {
		ch, stop := e.core.Subscribe()
		defer stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
			}
			e.core.Update(func(s *app.State) error {
				for _, r := range s.RequestsFor("nosy") {
					s.DecideRequest(app.Decision{Server: "nosy", Root: r.Path, Verdict: app.Deny, By: app.ByCommandLine})
				}
				return nil
			})
		}
	}()
	errs := make(chan string, len(paths))
	sem := make(chan struct{}, 10)
	for _, p := range paths {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			if r := nosyTry(t, e, "nosy", "read", p); r.OK {
				errs <- p
			}
		}()
	}
	for range cap(sem) {
		sem <- struct{}{}
	}
	close(errs)
	for p := range errs {
		t.Errorf("a probe read %s", p)
	}
	denied := 0
	for _, d := range e.core.Snapshot().State.Decisions {
		if d.Server == "nosy" && d.Verdict == app.Deny {
			denied++
		}
	}
	open := len(e.core.Snapshot().State.RequestsFor("nosy"))
	if denied+open > 100 || denied+open > app.NewReachLimiter().Burst+2 {
		t.Errorf("%d requests raised by 10,000 probes", denied+open)
	}
	t.Logf("10,000 probes raised %d requests", denied+open)
	cancel() // no more automatic denies

	// Another server is unaffected: its own first attempt is asked about
	// at once, the prober's limit notwithstanding.
	calmDir := mkRoot(t, "calm-wants")
	os.WriteFile(filepath.Join(calmDir, "x.txt"), []byte("x"), 0o600)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "calm", Type: app.TransportStdio, Command: nosyServer(t), Confine: true})
	})
	e.waitConnected("calm")
	done := make(chan nosyResult, 1)
	go func() { done <- nosyTry(t, e, "calm", "read", filepath.Join(calmDir, "x.txt")) }()
	eventually(t, "calm's request", func() (bool, string) {
		_, ok := e.core.Snapshot().State.Request("calm", calmDir)
		return ok, ""
	})
	e.update(func(s *app.State) error { return s.GrantOnce("calm", calmDir, app.ByCommandLine, time.Now().UTC()) })
	if r := <-done; !r.OK || r.Got != "x" {
		t.Errorf("calm allowed once: %+v", r)
	}
}

// TestReachAllowOnceFallsBackForAMkdir: a mkdir cannot be handed a
// descriptor, so allow once allows the folder until quit instead (by whom
// allowed once); the waiting call fails as before, and after the restart
// the server reaches the folder.
func TestReachAllowOnceFallsBackForAMkdir(t *testing.T) {
	e, _ := reachEnv(t)
	work := mkRoot(t, "work")
	pid := e.status("nosy").PID
	got := tryAsync(t, e, "mkdir", filepath.Join(work, "new"))
	r := waitRequest(t, e, work)
	if r.Op != "create" {
		t.Errorf("request %+v", r)
	}
	e.update(func(s *app.State) error { return s.GrantOnce("nosy", work, app.ByDialog, time.Now().UTC()) })
	if res := <-got; res.OK {
		t.Errorf("the mkdir allowed once went through: %+v", res)
	}
	eventually(t, "the folder allowed until quit", func() (bool, string) {
		d, ok := e.core.Snapshot().State.Decision("nosy", work)
		return ok && d.Verdict == app.Allow && d.Scope == app.UntilQuit && d.By == app.ByDialog, ""
	})
	e.core.SetHealth(work, app.Health{Status: app.HealthOK})
	e.waitRestarted("nosy", pid)
	if res := nosyTry(t, e, "nosy", "mkdir", filepath.Join(work, "new")); !res.OK {
		t.Errorf("mkdir after the folder was allowed: %+v", res)
	}
}
