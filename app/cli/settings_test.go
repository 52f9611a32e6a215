package cli

import (
	"strings"
	"testing"
	"time"

	"rootkeeper/app"
)

// TestSettingsReachWait: the wait is shown, set from a duration or whole
// seconds, and a bad value is refused naming it, with nothing saved.
func TestSettingsReachWait(t *testing.T) {
	h := newHarness(t)
	if out := h.ok("settings"); !strings.Contains(out, "reach-wait 10s") {
		t.Errorf("settings by default: %q", out)
	}
	for _, tc := range []struct {
		arg  string
		want time.Duration
	}{{"30s", 30 * time.Second}, {"2m", 2 * time.Minute}, {"5", 5 * time.Second}} {
		arg, want := tc.arg, tc.want
		h.ok("settings", "reach-wait", arg)
		store, err := app.OpenStore(h.dir)
		if err != nil {
			t.Fatal(err)
		}
		st, err := store.Load()
		if err != nil {
			t.Fatal(err)
		}
		if got := st.ReachWait(); got != want {
			t.Errorf("reach-wait %s: %v, want %v", arg, got, want)
		}
	}
	if out := h.ok("settings", "--json"); !strings.Contains(out, `"reachWait": 5`) {
		t.Errorf("settings --json: %q", out)
	}
	h.fails(2, []string{"settings", "reach-wait", "0s"}, `"0s"`)
	h.fails(2, []string{"settings", "reach-wait", "3m"}, `"3m"`)
	h.fails(2, []string{"settings", "reach-wait", "1.5s"}, `"1.5s"`)
	h.fails(2, []string{"settings", "reach-wait", "soon"}, `"soon"`)
	h.fails(2, []string{"settings", "colour", "blue"}, `"colour"`)
}

// TestGrantOncePrintsWhatItLetThrough: on a request with a read, a
// truncate and a mkdir waiting, `grant --once` of the folder lets the read
// through and names what it refused; of the truncated file, that call; a
// folder where only a change waits is refused with exit 2, and nothing is
// saved.
func TestGrantOncePrintsWhatItLetThrough(t *testing.T) {
	h := newHarness(t)
	h.ok("servers", "add", "nosy", "--", "nosy")
	secret := h.folder("secret")
	calls := []app.ReachCall{
		{ID: "r", Op: app.OpRead, Path: secret + "/a.txt"},
		{ID: "t", Op: app.OpTruncate, Path: secret + "/b.txt"},
		{ID: "m", Op: app.OpMkdir, Path: secret + "/d", NotOnce: "a folder cannot be made for it once"},
	}
	ask := func(cs ...app.ReachCall) {
		t.Helper()
		store, err := app.OpenStore(h.dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Update(func(s *app.State) error {
			for _, c := range cs {
				if _, err := s.AskReach("nosy", secret, c, time.Now().UTC(), true); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	ask(calls...)
	out := h.ok("grant", "nosy", secret, "--once")
	for _, want := range []string{"read " + secret + "/a.txt", "refused: make the folder " + secret + "/d", "refused: empty and rewrite " + secret + "/b.txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("grant --once of the folder does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "  empty and rewrite") {
		t.Errorf("the truncate was let through on the folder's once:\n%s", out)
	}

	ask(calls[1])
	h.fails(2, []string{"grant", "nosy", secret, "--once"}, "empty and rewrite "+secret+"/b.txt", "--once")
	if out := h.ok("grant", "nosy", secret+"/b.txt", "--once"); !strings.Contains(out, "  empty and rewrite "+secret+"/b.txt") {
		t.Errorf("grant --once of the file:\n%s", out)
	}
}
