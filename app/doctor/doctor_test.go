package doctor

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/policy"
)

func procSys(t *testing.T, watches string) string {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "fs", "inotify"), 0o755)
	os.WriteFile(filepath.Join(dir, "fs", "inotify", "max_user_watches"), []byte(watches+"\n"), 0o644)
	return dir
}

func find(t *testing.T, checks []Check, name string) Check {
	t.Helper()
	for _, c := range checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, checks)
	return Check{}
}

// A healthy machine: every check passes, none asks for anything.
func TestAllWell(t *testing.T) {
	st := app.State{
		Roots: []app.Root{{Path: "/a", Enabled: true}, {Path: "/b"}},
		Servers: []app.Server{
			{Name: "fs", Type: app.TransportStdio, Command: "npx", Env: map[string]string{"GITHUB_TOKEN": "keyring:rootkeeper/fs/env/GITHUB_TOKEN"}},
			{Name: "web", Type: app.TransportHTTP, URL: "https://x"},
		},
	}
	checks := Run(Options{
		State:     st,
		TrayHost:  func() bool { return true },
		Landlock:  func() (int, error) { return 6, nil },
		Keyring:   func() error { return nil },
		ProcSys:   procSys(t, "524288"),
		LookPath:  func(p string) (string, error) { return "/usr/bin/" + p, nil },
		Autostart: func() (bool, string, error) { return true, "/x/autostart/rootkeeper.desktop", nil },
	})
	if n := Problems(checks); n != 0 {
		t.Fatalf("%d problems: %+v", n, checks)
	}
	if len(checks) != 7 { // policy, tray, login, Landlock, inotify, keyring, one stdio server
		t.Errorf("%d checks: %+v", len(checks), checks)
	}
	if c := find(t, checks, "inotify"); !strings.Contains(c.Detail, "needs 2 for 1 enabled roots") {
		t.Errorf("inotify: %q", c.Detail)
	}
	if c := find(t, checks, "server fs"); c.Detail != "runs /usr/bin/npx" {
		t.Errorf("server fs: %q", c.Detail)
	}
}

// Each problem is found and comes with what to do.
func TestProblems(t *testing.T) {
	st := app.State{
		Roots: []app.Root{{Path: "/a", Enabled: true}},
		Servers: []app.Server{
			{Name: "boxed", Type: app.TransportStdio, Command: "/opt/srv", Confine: true},
			{Name: "fs", Type: app.TransportStdio, Command: "npx", Env: map[string]string{"GITHUB_TOKEN": "keyring:rootkeeper/fs/env/GITHUB_TOKEN"}},
			{Name: "py", Type: app.TransportStdio, Command: "uvx"},
		},
	}
	noNode := func(p string) (string, error) {
		if p == "npx" || p == "/opt/srv" {
			return "/usr/bin/" + p, nil
		}
		return "", errors.New(`exec: "` + p + `": executable file not found in $PATH`)
	}
	checks := Run(Options{
		State:    st,
		TrayHost: func() bool { return false },
		Landlock: func() (int, error) { return 0, errors.New("Landlock is not enabled in this kernel") },
		Keyring:  func() error { return errors.New("no D-Bus session bus") },
		ProcSys:  procSys(t, "100"),
		LookPath: noNode,
	})
	for name, want := range map[string]string{
		"tray host": "AppIndicator",
		"Landlock":  "kernel command line",
		"inotify":   "max_user_watches=524288",
		"keyring":   "unlock or start the keyring",
		"server fs": "install Node.js",
		"server py": "install uv",
	} {
		c := find(t, checks, name)
		if c.OK || !strings.Contains(c.Fix, want) {
			t.Errorf("%s: ok=%v fix %q, want it to say %q (detail %q)", name, c.OK, c.Fix, want, c.Detail)
		}
	}
	if c := find(t, checks, "Landlock"); !strings.Contains(c.Detail, "boxed") {
		t.Errorf("Landlock does not name the confined server: %q", c.Detail)
	}
	if c := find(t, checks, "server boxed"); !c.OK {
		t.Errorf("server boxed: %+v", c)
	}
	if Problems(checks) != 6 {
		t.Errorf("problems = %d: %+v", Problems(checks), checks)
	}
}

// The keyring's verdict depends on what the servers keep where.
func TestKeyringCases(t *testing.T) {
	ref := map[string]string{"API_KEY": "keyring:rootkeeper/s/env/API_KEY"}
	plain := map[string]string{"API_KEY": "k123"}
	down := errors.New("no bus")
	for _, tc := range []struct {
		name  string
		env   map[string]string
		reach error
		ok    bool
	}{
		{"no secrets, no keyring", map[string]string{"A": "1"}, down, true},
		{"references, keyring up", ref, nil, true},
		{"references, keyring down", ref, down, false},
		{"plain, keyring down", plain, down, false},
		{"plain, keyring up", plain, nil, false},
	} {
		st := app.State{Servers: []app.Server{{Name: "s", Type: app.TransportStdio, Command: "x", Env: tc.env}}}
		c := keyring(st, tc.reach)
		if c.OK != tc.ok || (!c.OK && c.Fix == "") {
			t.Errorf("%s: %+v", tc.name, c)
		}
		if strings.Contains(c.Detail, "k123") {
			t.Errorf("%s: the detail prints the secret: %q", tc.name, c.Detail)
		}
	}
}

// The real /proc/sys of this machine is read.
func TestInotifyReadsTheRealLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("inotify is Linux's")
	}
	if _, err := os.Stat("/proc/sys/fs/inotify/max_user_watches"); err != nil {
		apptest.Missing(t, "no inotify limits here: "+err.Error())
	}
	c := inotify(app.State{}, "/proc/sys")
	if !strings.HasPrefix(c.Detail, "max_user_watches ") {
		t.Fatalf("%+v", c)
	}
}

// TestLandlockMissingSaysWhichServersRunUnconfined: where Landlock is
// missing, doctor names the servers confined by default (they run
// unconfined: roots are only advice to them) apart from those whose
// confinement was asked for (not started), and says how to get it.
func TestLandlockMissingSaysWhichServersRunUnconfined(t *testing.T) {
	st := app.State{Servers: []app.Server{
		{Name: "fs", Type: app.TransportStdio, Command: "a", Confine: true},
		{Name: "strict", Type: app.TransportStdio, Command: "b", Confine: true, ConfineRequired: true},
		{Name: "open", Type: app.TransportStdio, Command: "c"},
	}}
	noLandlock := func() (int, error) { return 0, errors.New("cannot confine: this Linux kernel has no Landlock") }
	c := landlock(st, noLandlock, noLandlock)
	for _, want := range []string{"these servers run unconfined here, and roots are only advice to them: fs",
		"these servers were asked to be confined and are not started: strict"} {
		if c.OK || !strings.Contains(c.Detail, want) {
			t.Errorf("Landlock check %+v lacks %q", c, want)
		}
	}
	if !strings.Contains(c.Fix, "rootkeeper servers unconfine NAME") || strings.Contains(c.Detail, "open") {
		t.Errorf("Landlock check %+v", c)
	}
	seven := func() (int, error) { return 7, nil }
	if c := landlock(st, seven, seven); !c.OK || !strings.Contains(c.Detail, "below ABI 9 Rootkeeper checks each connect of their unix sockets itself") || strings.Contains(c.Detail, "capped") {
		t.Errorf("with ABI 7: %+v", c)
	}
}

// TestLandlockCappedSaysSo: an ABI capped below the kernel's by
// ROOTKEEPER_LANDLOCK_ABI is named, with the variable and how to lift it;
// a cap that is not an ABI, on a kernel with Landlock, is a problem that
// starts no confined server (neither those confined by default: they are
// not run unconfined), and the fix names the variable.
func TestLandlockCappedSaysSo(t *testing.T) {
	st := app.State{Servers: []app.Server{
		{Name: "fs", Type: app.TransportStdio, Command: "a", Confine: true},
		{Name: "strict", Type: app.TransportStdio, Command: "b", Confine: true, ConfineRequired: true},
	}}
	seven := func() (int, error) { return 7, nil }
	c := landlock(st, func() (int, error) { return 2, nil }, seven)
	if want := "ABI 2 (capped: ROOTKEEPER_LANDLOCK_ABI=2; the kernel offers 7, unset the variable to confine at 7)"; !c.OK || !strings.HasPrefix(c.Detail, want) {
		t.Errorf("capped at 2: %+v, want a detail beginning %q", c, want)
	}
	bad := func() (int, error) {
		return 0, errors.New(`cannot confine: ROOTKEEPER_LANDLOCK_ABI="abc" is not a Landlock ABI (1 to 7)`)
	}
	c = landlock(st, bad, seven)
	if c.OK || !strings.Contains(c.Detail, `ROOTKEEPER_LANDLOCK_ABI="abc"`) || !strings.Contains(c.Detail, "these servers are not started: strict, fs") ||
		strings.Contains(c.Detail, "unconfined") || c.Fix != "set ROOTKEEPER_LANDLOCK_ABI to a number from 1 to 7, or unset it" {
		t.Errorf("a cap that is not an ABI: %+v", c)
	}
}

// TestOrganisationsPolicy: doctor says which policy applies and what it
// sets, and a policy that cannot be used is a problem an administrator
// fixes.
func TestOrganisationsPolicy(t *testing.T) {
	old := app.Policy()
	t.Cleanup(func() { app.SetPolicy(old) })
	app.SetPolicy(policy.Policy{Source: "/etc/rootkeeper/policy.json", RequireConfinement: true})
	if c := orgPolicy(); !c.OK || !strings.Contains(c.Detail, "every stdio server confined") {
		t.Errorf("%+v", c)
	}
	app.SetPolicy(policy.Policy{Source: "/etc/rootkeeper/policy.json", Broken: `unknown key "x"`})
	if c := orgPolicy(); c.OK || !strings.Contains(c.Fix, `unknown key "x"`) {
		t.Errorf("%+v", c)
	}
}
