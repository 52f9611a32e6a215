package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rootkeeper/app/autostart"
	"rootkeeper/app/doctor"
)

// autostart on/off/status round-trips the XDG entry in XDG_CONFIG_HOME, and
// bad sub-verbs are usage errors naming the value.
func TestAutostartVerb(t *testing.T) {
	h := newHarness(t)
	config := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", config)
	entry := filepath.Join(config, "autostart", autostart.DesktopFileName)

	if out := h.ok("autostart", "status"); !strings.HasPrefix(out, "does not start at login") || !strings.Contains(out, entry) {
		t.Fatalf("status before: %q", out)
	}
	if out := h.ok("autostart", "on"); !strings.HasPrefix(out, "starts at login") {
		t.Fatalf("on: %q", out)
	}
	data, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), " --hidden\n") {
		t.Fatalf("the entry does not start the app hidden:\n%s", data)
	}
	var st autostart.Status
	if err := json.Unmarshal([]byte(h.ok("autostart", "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if !st.Enabled || st.Where != entry {
		t.Fatalf("status --json: %+v", st)
	}
	h.ok("autostart", "off")
	if _, err := os.Stat(entry); !os.IsNotExist(err) {
		t.Fatalf("entry left after off: %v", err)
	}
	h.fails(2, []string{"autostart"}, "autostart")
	h.fails(2, []string{"autostart", "maybe"}, "maybe")
	h.fails(2, []string{"autostart", "on", "extra"}, "extra")
}

// doctor prints each check and what to do, and exits 1 when one failed, 0
// when all are fine.
func TestDoctorVerb(t *testing.T) {
	h := newHarness(t)
	real := doctorProbes
	t.Cleanup(func() { doctorProbes = real })
	tray := false
	doctorProbes = func() doctor.Options {
		return doctor.Options{
			TrayHost: func() bool { return tray },
			// The real keyring check, against the Secret Service
			// secrets_test.go's TestMain runs for this package.
			Keyring:  real().Keyring,
			LookPath: doctor.SystemLookPath,
		}
	}
	h.ok("servers", "add", "sh", "--", "sh", "-c", "true")
	r := h.run("doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL  tray host") || !strings.Contains(r.stdout, "what to do: GNOME") ||
		!strings.Contains(r.stdout, "ok    keyring") || !strings.Contains(r.stdout, "ok    server sh") || r.stderr != "rootkeeper: doctor found 1 problem(s)\n" {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	tray = true
	var checks []doctor.Check
	if err := json.Unmarshal([]byte(h.ok("doctor", "--json")), &checks); err != nil || len(checks) != 4 || checks[0].Name != "organisation's policy" {
		t.Fatalf("doctor --json: %v %+v", err, checks)
	}
	h.fails(2, []string{"doctor", "now"}, "now")
}

// doctor checks each protected host file: a server added by the host after
// protect runs beside Rootkeeper, and doctor says to protect it again.
func TestDoctorChecksProtectedHosts(t *testing.T) {
	h, home := hostsHarness(t)
	real := doctorProbes
	t.Cleanup(func() { doctorProbes = real })
	doctorProbes = func() doctor.Options { return doctor.Options{} }
	cursor := filepath.Join(home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(cursor), 0o755)
	os.WriteFile(cursor, []byte(`{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}`), 0o600)
	h.ok("hosts", "protect", "cursor")
	if out := h.ok("doctor"); !strings.Contains(out, "ok    host cursor") || !strings.Contains(out, "all 1 servers run the bridge") {
		t.Fatalf("doctor after protect:\n%s", out)
	}
	data, _ := os.ReadFile(cursor)
	added := strings.Replace(string(data), `"mcpServers": {`, `"mcpServers": {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}, `, 1)
	os.WriteFile(cursor, []byte(added), 0o600)
	r := h.run("doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL  host cursor") || !strings.Contains(r.stdout, "fetch not behind the bridge") ||
		!strings.Contains(r.stdout, "what to do: rootkeeper hosts protect cursor") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}
