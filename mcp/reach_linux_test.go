package mcp

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/audit"
)

// reachEnv runs nosy managed and confined to root, observed, with the
// person's answers given through the state as the dialog and `grant` give
// them. With asking a person can be asked (the app with its window) and a
// call waits up to the longest wait there is, so that a call that waited
// for an answer nobody gives fails the test instead of passing late;
// without, nobody can be asked (headless).
func reachEnv(t *testing.T, asking bool) (e *testEnv, root string) {
	needLandlock(t)
	bin := nosyServer(t)
	e = newEnv(t)
	root = mkRoot(t, "granted")
	e.update(func(s *app.State) error {
		s.Settings = &app.Settings{ReachWait: int(app.MaxReachWait / time.Second)}
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: bin, Confine: true})
	})
	e.addRoots(root)
	e.grant("nosy", root)
	opts := e.fastOptions()
	opts.CanAsk = func() bool { return asking }
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

// waitRequest waits for nosy's open request for folder, with calls calls
// waiting on it, and returns it.
func waitRequest(t *testing.T, e *testEnv, folder string, calls int) app.Request {
	t.Helper()
	var r app.Request
	apptest.Eventually(t, fmt.Sprintf("a request for %s with %d calls", folder, calls), func() (bool, string) {
		var ok bool
		r, ok = e.core.Snapshot().State.Request("nosy", folder)
		return ok && len(r.Waiting(time.Now())) == calls, fmt.Sprintf("%+v", r)
	})
	return r
}

// allowOnce answers the calls of r that allow once typed for target
// answers (`grant nosy TARGET --once`).
func allowOnce(t *testing.T, e *testEnv, r app.Request, target string) app.OnceAnswer {
	t.Helper()
	var ans app.OnceAnswer
	e.update(func(s *app.State) error {
		ids, _, _ := r.OnceCalls(target, time.Now())
		if ids == nil {
			ids = []string{}
		}
		var err error
		ans, err = s.GrantOnce("nosy", r.Path, ids, app.ByCommandLine, time.Now().UTC())
		return err
	})
	return ans
}

// TestReachAsksAndAllowOnceWithoutRestart is the first test: a
// confined server that tries a file in a folder it was not given raises a
// request naming that folder; allow once makes the same call succeed with
// no restart (same pid); the next file there asks again; deny is never
// asked again; allow this folder lets later accesses through.
func TestReachAsksAndAllowOnceWithoutRestart(t *testing.T) {
	e, _ := reachEnv(t, true)
	taxes := mkRoot(t, "taxes")
	os.WriteFile(filepath.Join(taxes, "2025.pdf"), []byte("2025"), 0o600)
	os.WriteFile(filepath.Join(taxes, "2024.pdf"), []byte("2024"), 0o600)
	pid := e.status("nosy").PID

	got := tryAsync(t, e, "read", filepath.Join(taxes, "2025.pdf"))
	r := waitRequest(t, e, taxes, 1)
	if r.From != app.FromReach || r.Tried != filepath.Join(taxes, "2025.pdf") || r.Op != "read" {
		t.Errorf("request %+v", r)
	}
	if txt := app.RequestText(r); !strings.Contains(txt, "nosy tried to read ") || !strings.HasSuffix(txt, "allow "+taxes+"?") {
		t.Errorf("RequestText = %q", txt)
	}
	allowOnce(t, e, r, taxes)
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
	waitRequest(t, e, taxes, 1)
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

	// Allow this folder: the waiting call gets the file; later ones too,
	// from the same process (its observer hands the folder until its next
	// start puts it in its ruleset).
	photos := mkRoot(t, "photos")
	os.WriteFile(filepath.Join(photos, "cat.jpg"), []byte("cat"), 0o600)
	got = tryAsync(t, e, "read", filepath.Join(photos, "cat.jpg"))
	waitRequest(t, e, photos, 1)
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
	apptest.Eventually(t, "a later read in the allowed folder", func() (bool, string) {
		res := nosyTry(t, e, "nosy", "read", filepath.Join(photos, "cat.jpg"))
		return res.OK && res.Got == "cat", fmt.Sprintf("%+v", res)
	})
	if now := e.status("nosy").PID; now != pid {
		t.Errorf("allowing the folder restarted the server: pid %d, then %d", pid, now)
	}
}

// TestReachHostileProber: a confined server probing ten thousand paths in a
// hundred folders raises at most a hundred requests (in fact the limiter's
// handful), and every probe still fails.
func TestReachHostileProber(t *testing.T) {
	e, _ := reachEnv(t, true)
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
	apptest.Eventually(t, "calm's request", func() (bool, string) {
		_, ok := e.core.Snapshot().State.Request("calm", calmDir)
		return ok, ""
	})
	e.update(func(s *app.State) error {
		_, err := s.GrantOnce("calm", calmDir, nil, app.ByCommandLine, time.Now().UTC())
		return err
	})
	if r := <-done; !r.OK || r.Got != "x" {
		t.Errorf("calm allowed once: %+v", r)
	}
}

// TestAllowOnceLetsThroughOnlyTheCallsShown: while a read waits, the
// server truncates a file, creates one and makes a folder there; each call
// joins the request. Allow once on the read lets the read through and
// nothing else: no file emptied or written, no folder made, no decision
// stored, no restart. A descriptor handed for a read changes no mode,
// owner, attribute or time of the file.
func TestAllowOnceLetsThroughOnlyTheCallsShown(t *testing.T) {
	e, _ := reachEnv(t, true)
	secret := mkRoot(t, "secret")
	a, b := filepath.Join(secret, "a.txt"), filepath.Join(secret, "b.txt")
	os.WriteFile(a, []byte("A"), 0o600)
	os.WriteFile(b, []byte("B"), 0o600)
	pid := e.status("nosy").PID

	read := tryAsync(t, e, "read", a)
	waitRequest(t, e, secret, 1)
	others := map[string]<-chan nosyResult{
		"truncate": tryAsync(t, e, "truncate", b),
		"create":   tryAsync(t, e, "create", filepath.Join(secret, "new.txt")),
		"mkdir":    tryAsync(t, e, "mkdir", filepath.Join(secret, "d")),
	}
	r := waitRequest(t, e, secret, 4)
	ops := map[string]string{}
	for _, c := range r.Calls {
		ops[c.Path] = c.Op
	}
	if want := map[string]string{a: app.OpRead, b: app.OpTruncate, filepath.Join(secret, "new.txt"): app.OpCreate, filepath.Join(secret, "d"): app.OpMkdir}; !maps.Equal(ops, want) {
		t.Errorf("the calls listed: %v, want %v", ops, want)
	}
	ans := allowOnce(t, e, r, a)
	if len(ans.Let) != 1 || ans.Let[0].Path != a {
		t.Errorf("allow once on the read let through %+v", ans.Let)
	}
	if res := <-read; !res.OK || res.Got != "A" {
		t.Errorf("the read allowed once: %+v", res)
	}
	for op, ch := range others {
		if res := <-ch; res.OK {
			t.Errorf("%s went through on a once given for a read: %+v", op, res)
		}
	}
	if got, _ := os.ReadFile(b); string(got) != "B" {
		t.Errorf("b.txt is %q after the once", got)
	}
	for _, p := range []string{filepath.Join(secret, "new.txt"), filepath.Join(secret, "d")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was made", p)
		}
	}
	snap := e.core.Snapshot()
	if _, decided := snap.State.Decision("nosy", secret); decided {
		t.Error("allow once stored a decision")
	}
	if e.status("nosy").PID != pid {
		t.Error("allow once restarted the server")
	}

	// fchmod, fchown, fsetxattr and futimens on a descriptor handed for a
	// read: each open is allowed once, each change refused.
	var before unix.Stat_t
	unix.Stat(a, &before)
	for _, op := range []string{"fchmod", "fchown", "fsetxattr", "futimens"} {
		got := tryAsync(t, e, op, a)
		ans := allowOnce(t, e, waitRequest(t, e, secret, 1), a)
		if len(ans.Let) != 1 || ans.Let[0].Op != app.OpRead {
			t.Errorf("%s: allow once let through %+v", op, ans.Let)
		}
		if res := <-got; res.OK || !strings.Contains(res.Err, "operation not permitted") {
			t.Errorf("%s on a descriptor handed for a read: %+v", op, res)
		}
	}
	var after unix.Stat_t
	unix.Stat(a, &after)
	if after.Mode != before.Mode || after.Uid != before.Uid || after.Gid != before.Gid || after.Mtim != before.Mtim {
		t.Errorf("a.txt changed: mode %o uid %d gid %d mtime %v, was %o %d %d %v", after.Mode, after.Uid, after.Gid, after.Mtim, before.Mode, before.Uid, before.Gid, before.Mtim)
	}
	if _, err := unix.Getxattr(a, "user.nosy", nil); err == nil {
		t.Error("a.txt got an extended attribute")
	}
}

// TestReachRefusedAtOnceWithNobodyToAsk: headless, a confined server's
// attempt past its folders is refused without anybody answering, though a
// call would wait two minutes if somebody were asked; the request waits for
// the person, marked unasked; a second attempt on that folder is refused at
// once too, and both are audited as unasked and refused, not timed out.
func TestReachRefusedAtOnceWithNobodyToAsk(t *testing.T) {
	e, _ := reachEnv(t, false)
	secret := mkRoot(t, "secret")
	os.WriteFile(filepath.Join(secret, "a.txt"), []byte("A"), 0o600)
	os.WriteFile(filepath.Join(secret, "b.txt"), []byte("B"), 0o600)
	pid := e.status("nosy").PID
	for _, f := range []string{"a.txt", "b.txt"} {
		if res := nosyTry(t, e, "nosy", "read", filepath.Join(secret, f)); res.OK || !strings.Contains(res.Err, "permission denied") {
			t.Fatalf("read %s with nobody to ask: %+v", f, res)
		}
	}
	var r app.Request
	apptest.Eventually(t, "the request kept for the person", func() (bool, string) {
		var ok bool
		r, ok = e.core.Snapshot().State.Request("nosy", secret)
		return ok, ""
	})
	if !r.Unasked || len(r.Calls) != 0 || r.Tried != filepath.Join(secret, "a.txt") {
		t.Errorf("request %+v", r)
	}
	a, b := filepath.Join(secret, "a.txt"), filepath.Join(secret, "b.txt")
	if got := attemptsAudited(t, e.dir, "nosy", audit.ViaReach, a, b); !slices.Equal(got, raisedOnce) {
		t.Errorf("the reads of %s and %s audited %q, want %q", a, b, got, raisedOnce)
	}
	if e.status("nosy").PID != pid {
		t.Error("the server was restarted")
	}
}

// TestReachAllowOnceRefusesAMkdir: a mkdir cannot be handed a descriptor:
// allow once says so and changes nothing (no until-quit decision, no
// restart); allowing the folder fails the waiting mkdir, restarts the
// server, and after the restart the mkdir works.
func TestReachAllowOnceRefusesAMkdir(t *testing.T) {
	e, _ := reachEnv(t, true)
	work := mkRoot(t, "work")
	pid := e.status("nosy").PID
	got := tryAsync(t, e, "mkdir", filepath.Join(work, "new"))
	r := waitRequest(t, e, work, 1)
	if r.Op != app.OpMkdir || r.Calls[0].NotOnce == "" {
		t.Errorf("request %+v", r)
	}
	err := e.core.Update(func(s *app.State) error {
		_, err := s.GrantOnce("nosy", work, nil, app.ByDialog, time.Now().UTC())
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "allow once cannot let through") {
		t.Errorf("allow once of a mkdir: %v", err)
	}
	if _, decided := e.core.Snapshot().State.Decision("nosy", work); decided {
		t.Error("allow once of a mkdir stored a decision")
	}
	e.update(func(s *app.State) error {
		e.core.SetHealth(work, app.Health{Status: app.HealthOK})
		return s.DecideRequest(app.Decision{Server: "nosy", Root: work, Verdict: app.Allow, By: app.ByDialog})
	})
	if res := <-got; res.OK {
		t.Errorf("the waiting mkdir, which cannot be handed, went through: %+v", res)
	}
	// The next one is made for it by its observer, in the same process.
	apptest.Eventually(t, "a mkdir in the allowed folder", func() (bool, string) {
		res := nosyTry(t, e, "nosy", "mkdir", filepath.Join(work, "new"))
		return res.OK, fmt.Sprintf("%+v", res)
	})
	if now := e.status("nosy").PID; now != pid {
		t.Errorf("allowing the folder restarted the server: pid %d, then %d", pid, now)
	}
}

// TestReachMarksAbsentPaths: a confined server's read of a file that does
// not exist past its folders is not asked about and is audited as absent
// (it failed as it would have unconfined); a read of one that exists
// raises a request and is not.
func TestReachMarksAbsentPaths(t *testing.T) {
	e, _ := reachEnv(t, false)
	secret := mkRoot(t, "secret")
	present, missing := filepath.Join(secret, "a.txt"), filepath.Join(secret, "missing.txt")
	os.WriteFile(present, []byte("A"), 0o600)
	if res := nosyTry(t, e, "nosy", "read", missing); res.OK || !strings.Contains(res.Err, "no such file") {
		t.Fatalf("read of a missing file: %+v, want it to fail as unconfined", res)
	}
	if res := nosyTry(t, e, "nosy", "read", present); res.OK {
		t.Fatalf("read past the folders: %+v", res)
	}
	var got map[string]audit.Entry
	apptest.Eventually(t, "both attempts audited", func() (bool, string) {
		entries, err := audit.Read(e.dir, "nosy")
		if err != nil {
			t.Fatal(err)
		}
		got = map[string]audit.Entry{}
		for _, en := range entries {
			if en.Via == audit.ViaReach {
				got[en.Tried] = en
			}
		}
		return len(got) >= 2, fmt.Sprint(got)
	})
	if m := got[missing]; m.Decided != audit.ReachIgnored || !m.Absent || m.Request {
		t.Errorf("the missing file's attempt: %+v; want not asked, absent", m)
	}
	if p := got[present]; p.Decided != audit.ReachUnasked || p.Absent || !p.Request {
		t.Errorf("the present file's attempt: %+v; want unasked, a request, not absent", p)
	}
}
