//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/cli"
	"rootkeeper/mcp/confine"
)

// envWithABI is serverEnv with ROOTKEEPER_LANDLOCK_ABI set to value, or
// unset when value is "".
func envWithABI(value string) []string {
	var env []string
	for _, kv := range serverEnv() {
		if !strings.HasPrefix(kv, confine.EnvABI+"=") {
			env = append(env, kv)
		}
	}
	if value != "" {
		env = append(env, confine.EnvABI+"="+value)
	}
	return env
}

// confinementIn is the confinement `status --json` gives server, run with
// env.
func confinementIn(t *testing.T, env []string, state, server string) string {
	t.Helper()
	var st cli.Status
	if out := rkIn(t, env, state, "status", "--json"); json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("status --json:\n%s", out)
	}
	for _, s := range st.Servers {
		if s.Name == server {
			return s.Confinement
		}
	}
	t.Fatalf("no server %s in status", server)
	return ""
}

// TestLandlockCapIsShown: with ROOTKEEPER_LANDLOCK_ABI below the kernel's
// ABI, `servers add`, `status` (its text and --json) and `doctor` say the
// ABI is capped, and from what (doctor names the variable); a server the
// app then starts runs at the capped ABI and is shown so. Without the
// variable nothing is said to be capped. A value that is not an ABI is
// named wherever the ABI is shown, doctor fails on it, and a server
// confined by default is said not to be started (not to run unconfined).
func TestLandlockCapIsShown(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Landlock is Linux's")
	}
	kernel, err := confine.KernelABI()
	if err != nil {
		t.Fatalf("Landlock: %v", err)
	}
	if kernel < 2 {
		t.Skipf("the kernel's Landlock ABI is %d: nothing to cap it to", kernel)
	}
	if app.EnvLandlockABI != confine.EnvABI {
		t.Fatalf("app names the variable %s, mcp/confine %s", app.EnvLandlockABI, confine.EnvABI)
	}
	capped := kernel - 1
	capEnv := envWithABI(fmt.Sprint(capped))
	nosy := apptest.Program(t, "mcp/confine/testdata/nosy")
	state := t.TempDir()
	want := fmt.Sprintf("confined (Landlock ABI %d, capped from %d): ", capped, kernel)

	if out := rkIn(t, capEnv, state, "servers", "add", "boxed", "--", nosy); !strings.Contains(out, "boxed runs "+want) {
		t.Errorf("servers add with the cap said:\n%s", out)
	}
	if got := confinementIn(t, capEnv, state, "boxed"); !strings.HasPrefix(got, want) {
		t.Errorf("status --json with the cap: confinement %q, want it to begin %q", got, want)
	}
	if out := rkIn(t, capEnv, state, "status"); !strings.Contains(out, "  "+want) {
		t.Errorf("status with the cap:\n%s", out)
	}
	wantDoctor := fmt.Sprintf("ABI %d (capped: %s=%d; the kernel offers %d", capped, confine.EnvABI, capped, kernel)
	if out, _ := rkWithin(t, capEnv, state, "doctor"); !strings.Contains(out, wantDoctor) {
		t.Errorf("doctor with the cap does not say %q:\n%s", wantDoctor, out)
	}
	if got := confinementIn(t, envWithABI(""), state, "boxed"); strings.Contains(got, "capped") || !strings.HasPrefix(got, fmt.Sprintf("confined (Landlock ABI %d)", kernel)) {
		t.Errorf("status --json without the cap: %q", got)
	}

	startHeadlessIn(t, capEnv, state)
	waitFor(t, "boxed started at the capped ABI", func() bool {
		_, live := lastSent(liveStatus(t, state), "boxed")
		return live != nil && live.State == app.ServerConnected && live.LandlockABI == capped
	})
	// The running app's own words, asked without the variable: the server
	// runs at the cap.
	if got := confinementIn(t, envWithABI(""), state, "boxed"); !strings.HasPrefix(got, want) {
		t.Errorf("status of the server running at the cap: %q, want it to begin %q", got, want)
	}

	bare := t.TempDir()
	rkIn(t, envWithABI(""), bare, "servers", "add", "boxed", "--", nosy)
	for _, bad := range []string{"abc", "0", fmt.Sprint(kernel + 100)} {
		env := envWithABI(bad)
		named := fmt.Sprintf("%s=%q is not a Landlock ABI", confine.EnvABI, bad)
		if got := confinementIn(t, env, bare, "boxed"); !strings.Contains(got, named) || !strings.HasSuffix(got, "; the server is not started") {
			t.Errorf("status --json with %s=%s: confinement %q", confine.EnvABI, bad, got)
		}
		out, code := rkWithin(t, env, bare, "doctor")
		if code != 1 || !strings.Contains(out, named) || !strings.Contains(out, "set "+confine.EnvABI+" to a number from 1 to") {
			t.Errorf("doctor with %s=%s: exit %d\n%s", confine.EnvABI, bad, code, out)
		}
	}
}
