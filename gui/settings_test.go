package gui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Start at login switch writes and removes the XDG autostart entry
// (the one `rootkeeper autostart on|off` keeps), and shows what is there.
func TestStartAtLoginSwitch(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	entry := filepath.Join(home, ".config", "autostart", "rootkeeper.desktop")
	f := newFixture(t, Options{}, nil)
	s := newSettings(f.u)
	f.win.SetMainMenu(s.menu)
	if !s.login.Disabled {
		t.Error("the switch works before the entry was read")
	}
	s.load()
	if s.login.Checked || s.login.Disabled {
		t.Fatalf("with no entry: checked %t disabled %t", s.login.Checked, s.login.Disabled)
	}
	s.login.Action()
	data, err := os.ReadFile(entry)
	if err != nil {
		t.Fatalf("turned on, no entry: %v", err)
	}
	if !strings.Contains(string(data), "--hidden") {
		t.Errorf("the entry does not start to the tray:\n%s", data)
	}
	if !s.login.Checked || s.login.Disabled {
		t.Errorf("turned on: checked %t disabled %t", s.login.Checked, s.login.Disabled)
	}

	// A new window reads the entry that is there.
	again := newSettings(f.u)
	again.load()
	if !again.login.Checked {
		t.Error("a window opened after turning it on shows it off")
	}

	s.login.Action()
	if _, err := os.Stat(entry); !os.IsNotExist(err) {
		t.Errorf("turned off, the entry is still there (%v)", err)
	}
	if s.login.Checked {
		t.Error("turned off, still checked")
	}
}

// A failure to write the entry is shown in a dialog, and the check mark
// stays as it was.
func TestStartAtLoginFailure(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	f := newFixture(t, Options{}, nil)
	s := newSettings(f.u)
	s.load()
	// The autostart folder is a file: the entry cannot be written.
	if err := os.MkdirAll(filepath.Join(home, ".config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "autostart"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.login.Action()
	if s.login.Checked {
		t.Error("checked after a failed write")
	}
	if f.win.Canvas().Overlays().Top() == nil {
		t.Error("no error dialog")
	}
}
