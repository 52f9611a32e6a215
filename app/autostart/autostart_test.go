package autostart

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// isolate points HOME and XDG_CONFIG_HOME at temp folders, so that no test
// touches the person's real login entries.
func isolate(t *testing.T) (home, config string) {
	home, config = t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", config)
	return home, config
}

// On and off round-trip the XDG entry, in XDG_CONFIG_HOME, and what is
// written is a valid desktop entry that starts the program hidden.
func TestXDGEntryRoundTrip(t *testing.T) {
	_, config := isolate(t)
	b, err := xdgBackend()
	if err != nil {
		t.Fatal(err)
	}
	e := &Entry{Exe: "/opt/Root Keeper/100%/rootkeeper", Args: []string{HiddenFlag}, b: b}
	want := filepath.Join(config, "autostart", DesktopFileName)
	if e.Where() != want {
		t.Fatalf("entry at %q, want %q", e.Where(), want)
	}
	assertEnabled(t, e, false)
	if err := e.Set(true); err != nil {
		t.Fatal(err)
	}
	assertEnabled(t, e, true)
	data, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `Exec="/opt/Root Keeper/100%%/rootkeeper" --hidden`+"\n") {
		t.Fatalf("Exec line wrong:\n%s", data)
	}
	validateDesktop(t, want)
	if err := e.Set(true); err != nil { // again: rewritten, still one entry
		t.Fatal(err)
	}
	if err := e.Set(false); err != nil {
		t.Fatal(err)
	}
	assertEnabled(t, e, false)
	if _, err := os.Stat(want); !os.IsNotExist(err) {
		t.Fatalf("entry still there after off: %v", err)
	}
	if err := e.Set(false); err != nil {
		t.Fatalf("off twice: %v", err)
	}
}

// Without an absolute XDG_CONFIG_HOME the entry goes to ~/.config, as the
// base-directory spec says.
func TestXDGEntryDefaultsToDotConfig(t *testing.T) {
	home, _ := isolate(t)
	for _, v := range []string{"", "relative/dir"} {
		t.Setenv("XDG_CONFIG_HOME", v)
		b, err := xdgBackend()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := b.where(), filepath.Join(home, ".config", "autostart", DesktopFileName); got != want {
			t.Errorf("XDG_CONFIG_HOME=%q: entry at %q, want %q", v, got, want)
		}
	}
}

// An entry a desktop's own "startup applications" panel switched off is
// reported as off.
func TestXDGEntrySwitchedOffByTheDesktop(t *testing.T) {
	isolate(t)
	b, _ := xdgBackend()
	e := &Entry{Exe: "/usr/bin/rootkeeper", Args: []string{HiddenFlag}, b: b}
	for _, line := range []string{"Hidden=true", "X-GNOME-Autostart-enabled=false"} {
		if err := e.Set(true); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(e.Where())
		edited := strings.Replace(string(data), "X-GNOME-Autostart-enabled=true", line, 1)
		if err := os.WriteFile(e.Where(), []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		assertEnabled(t, e, false)
	}
}

func TestExecLineQuoting(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"/usr/bin/rootkeeper", "--hidden"}, `/usr/bin/rootkeeper --hidden`},
		{[]string{"/a b/rk"}, `"/a b/rk"`},
		{[]string{`/x"y/$HOME/a\b` + "`c"}, `"/x\"y/\$HOME/a\\b\` + "`" + `c"`},
		{[]string{"/50%/rk"}, `/50%%/rk`},
		{[]string{"/rk", ""}, `/rk ""`},
	} {
		if got := execLine(tc.argv); got != tc.want {
			t.Errorf("execLine(%q) = %s, want %s", tc.argv, got, tc.want)
		}
	}
	// The quoting backslashes are escaped once more as a string value.
	if got := desktopString(`"a\\b"`); got != `"a\\\\b"` {
		t.Errorf("desktopString = %s", got)
	}
}

// The LaunchAgent is a plist launchd reads: the label, the program and its
// flag as ProgramArguments, RunAtLoad.
func TestLaunchAgentRoundTrip(t *testing.T) {
	home, _ := isolate(t)
	b, err := launchAgentBackend()
	if err != nil {
		t.Fatal(err)
	}
	e := &Entry{Exe: "/Applications/Root & Keeper.app/Contents/MacOS/rootkeeper", Args: []string{HiddenFlag}, b: b}
	if want := filepath.Join(home, "Library", "LaunchAgents", "io.rootkeeper.app.plist"); e.Where() != want {
		t.Fatalf("plist at %q, want %q", e.Where(), want)
	}
	if err := e.Set(true); err != nil {
		t.Fatal(err)
	}
	assertEnabled(t, e, true)
	data, err := os.ReadFile(e.Where())
	if err != nil {
		t.Fatal(err)
	}
	var plist struct {
		Dict struct {
			Keys   []string `xml:"key"`
			String []string `xml:"string"`
			Array  struct {
				Strings []string `xml:"string"`
			} `xml:"array"`
			True *struct{} `xml:"true"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal(data, &plist); err != nil {
		t.Fatalf("not XML: %v\n%s", err, data)
	}
	if diff := cmp.Diff([]string{"Label", "ProgramArguments", "RunAtLoad", "ProcessType"}, plist.Dict.Keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{e.Exe, HiddenFlag}, plist.Dict.Array.Strings); diff != "" {
		t.Errorf("ProgramArguments (-want +got):\n%s", diff)
	}
	if plist.Dict.String[0] != LaunchAgentLabel || plist.Dict.True == nil {
		t.Errorf("label %q, RunAtLoad %v", plist.Dict.String[0], plist.Dict.True)
	}
	if err := e.Set(false); err != nil {
		t.Fatal(err)
	}
	assertEnabled(t, e, false)
}

// Default is this executable, started hidden.
func TestDefaultIsThisProgramHidden(t *testing.T) {
	isolate(t)
	e, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	if e.Exe != exe || len(e.Args) != 1 || e.Args[0] != HiddenFlag {
		t.Fatalf("Default() = %q %q", e.Exe, e.Args)
	}
	if _, err := New("relative/rootkeeper"); err == nil || !strings.Contains(err.Error(), "relative/rootkeeper") {
		t.Fatalf("a relative program: %v", err)
	}
}

func assertEnabled(t *testing.T, e *Entry, want bool) {
	t.Helper()
	got, err := e.Enabled()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("enabled = %v, want %v", got, want)
	}
}

// validateDesktop runs desktop-file-validate (desktop-file-utils, installed
// by .ci/setup) on path.
func validateDesktop(t *testing.T, path string) {
	t.Helper()
	tool, err := exec.LookPath("desktop-file-validate")
	if err != nil {
		t.Fatal("desktop-file-validate (Debian package desktop-file-utils) is needed: run .ci/setup")
	}
	out, err := exec.Command(tool, path).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("desktop-file-validate %s: %v\n%s", path, err, out)
	}
}
