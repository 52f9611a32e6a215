package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
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

// A token given to servers add goes to a real Secret Service, the state
// file and servers list --json keep a reference, and the server started by
// the app gets the token itself in its environment.
func TestSecretsGoThroughTheKeyringToTheServer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("shell script servers and gnome-keyring")
	}
	apptest.SecretService(t)
	state := t.TempDir()
	dump := filepath.Join(t.TempDir(), "env")
	const token = "ghp_0123456789abcdefTOKEN"
	mustRun(t, state, "servers", "add", "dumper", "--env", "DUMP="+dump, "--env", "GITHUB_TOKEN="+token, "--", dumpEnvServer(t))
	saved, err := os.ReadFile(filepath.Join(state, app.StateFileName))
	if err != nil {
		t.Fatal(err)
	}
	list := mustRun(t, state, "servers", "list", "--json")
	if strings.Contains(string(saved), token) || strings.Contains(list, token) {
		t.Fatalf("the token is in state.json or servers list --json:\n%s\n%s", saved, list)
	}
	if !strings.Contains(string(saved), `"keyring:rootkeeper/dumper/env/GITHUB_TOKEN"`) {
		t.Fatalf("state.json keeps no reference:\n%s", saved)
	}
	startHeadless(t, state)
	if got := readEnvDump(t, dump)["GITHUB_TOKEN"]; got != token {
		t.Fatalf("the server got GITHUB_TOKEN=%q, want the token from the keyring", got)
	}
}

// Without a keyring the command says so, the token stays in the 0600 state
// file, and servers list --json still does not print it.
func TestSecretsWithoutAKeyringStayInTheFileAndAreNotPrinted(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	state := t.TempDir()
	const token = "Bearer no-keyring-s3cret"
	_, errOut, code := rootkeeper(t, state, "servers", "add", "web", "--url", "https://mcp.example.com/mcp", "--header", "Authorization="+token)
	if code != 0 || !strings.Contains(errOut, "no keyring") || !strings.Contains(errOut, "Authorization") || strings.Contains(errOut, token) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	path := filepath.Join(state, app.StateFileName)
	saved, _ := os.ReadFile(path)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 || !strings.Contains(string(saved), token) {
		t.Fatalf("state file %v %v:\n%s", fi.Mode(), err, saved)
	}
	var servers []app.Server
	out := mustRun(t, state, "servers", "list", "--json")
	if err := json.Unmarshal([]byte(out), &servers); err != nil || strings.Contains(out, "s3cret") {
		t.Fatalf("servers list --json: %v\n%s", err, out)
	}
	if len(servers) != 1 || servers[0].Headers["Authorization"] == "" {
		t.Fatalf("servers %+v", servers)
	}
}
