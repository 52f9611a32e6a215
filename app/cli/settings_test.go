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
