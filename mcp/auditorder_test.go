package mcp

import (
	"fmt"
	"slices"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/audit"
)

// TestAnswersAreAuditedBeforeGiven: one grant, then one revoke, told to
// ten stdio servers at once, whose answers' audit lines are written
// together (audit.Log.AppendThen). When a server reports the list it got,
// its line is already in the audit log, so Rootkeeper killed at that
// moment leaves the record; and each server's lines are in the order it
// was answered: the base folder, both, the base folder again.
func TestAnswersAreAuditedBeforeGiven(t *testing.T) {
	const n = 10
	bin := rootServer(t)
	r := listenReports(t)
	e := newEnv(t)
	base, x := mkRoot(t, "base"), mkRoot(t, "x")
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("s%02d", i)
		e.addRootServer(bin, r, names[i], "")
	}
	e.addRoots(base, x)
	e.update(func(s *app.State) error {
		for _, name := range names {
			if err := s.Decide(app.Decision{Server: name, Root: base, Verdict: app.Allow}); err != nil {
				return err
			}
		}
		return nil
	})
	e.start(e.fastOptions())
	ub, ux := app.URIFromPath(base), app.URIFromPath(x)
	// lines is the roots of name's roots/list answers in the audit log,
	// an answer given again (a server may ask twice as it starts) once.
	lines := func(name string) [][]string {
		entries, err := audit.Read(e.dir, name)
		if err != nil {
			t.Fatal(err)
		}
		var got [][]string
		for _, en := range entries {
			if roots := sorted(en.Roots); en.Via == audit.ViaRootsList && (len(got) == 0 || !slices.Equal(got[len(got)-1], roots)) {
				got = append(got, roots)
			}
		}
		return got
	}
	// told waits for each server to report want and checks, at that
	// moment, that the audit log holds the answers so far.
	told := func(want ...[]string) {
		t.Helper()
		for _, name := range names {
			r.expectRoots(t, name, want[len(want)-1]...)
			if got := lines(name); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("%s holds %v; its audit lines are %v, want %v", name, want[len(want)-1], got, want)
			}
		}
	}
	told([]string{ub})
	change := func(granted bool) {
		e.update(func(s *app.State) error {
			for _, name := range names {
				if !granted {
					s.Revoke(name, x)
				} else if err := s.Decide(app.Decision{Server: name, Root: x, Verdict: app.Allow}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	change(true)
	told([]string{ub}, sorted([]string{ub, ux}))
	change(false)
	told([]string{ub}, sorted([]string{ub, ux}), []string{ub})
}
