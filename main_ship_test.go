package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rootkeeper/app/cli"
)

// --version prints the version of FyneApp.toml, the file the bundle is
// built from.
func TestVersionIsFyneApps(t *testing.T) {
	data, err := os.ReadFile("FyneApp.toml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := cli.VersionFromFyneApp(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, err := exec.Command(binary, args...).Output()
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if got := string(out); got != "rootkeeper "+want+"\n" {
			t.Fatalf("%q printed %q, want version %q", args, got, want)
		}
	}
}

// autostart on writes an entry that starts this very binary hidden; off
// takes it away. HOME and XDG_CONFIG_HOME are temp folders.
func TestAutostartStartsThisBinaryHidden(t *testing.T) {
	home, config := t.TempDir(), t.TempDir()
	env := append(serverEnv(), "HOME="+home, "XDG_CONFIG_HOME="+config)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(binary, append([]string{"--state-dir", t.TempDir()}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("autostart", "on")
	entry := filepath.Join(config, "autostart", "rootkeeper.desktop")
	data, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := filepath.EvalSymlinks(binary)
	if !strings.Contains(string(data), "\nExec="+exe+" --hidden\n") {
		t.Fatalf("entry does not start %s --hidden:\n%s", exe, data)
	}
	if out := run("autostart", "status"); !strings.HasPrefix(out, "starts at login") {
		t.Fatalf("status: %q", out)
	}
	run("autostart", "off")
	if _, err := os.Stat(entry); !os.IsNotExist(err) {
		t.Fatalf("entry left: %v", err)
	}
}
