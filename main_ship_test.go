package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

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

	// The MCP client announces the same version to a server: the first
	// message a server reads (server/discover, or initialize for older
	// protocol versions) carries Rootkeeper's clientInfo.
	state := t.TempDir()
	first := filepath.Join(t.TempDir(), "first.json")
	mustRun(t, state, "servers", "add", "listener", "--no-confine", "--", "sh", "-c", `head -n 1 > "$0.tmp" && mv "$0.tmp" "$0"; sleep 60`, first)
	startHeadless(t, state)
	var msg struct {
		Params struct {
			ClientInfo *struct{ Name, Version string } `json:"clientInfo"`
			Meta       struct {
				ClientInfo *struct{ Name, Version string } `json:"io.modelcontextprotocol/clientInfo"`
			} `json:"_meta"`
		} `json:"params"`
	}
	waitFor(t, "the server's first message", func() bool {
		b, err := os.ReadFile(first)
		return err == nil && json.Unmarshal(b, &msg) == nil
	})
	ci := msg.Params.ClientInfo
	if ci == nil {
		ci = msg.Params.Meta.ClientInfo
	}
	if ci == nil || ci.Name != "rootkeeper" || ci.Version != want {
		b, _ := os.ReadFile(first)
		t.Errorf("the client announced %+v, want rootkeeper %s; first message: %s", ci, want, b)
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
	mustRun(t, state, "servers", "add", "dumper", "--no-confine", "--env", "DUMP="+dump, "--env", "GITHUB_TOKEN="+token, "--", dumpEnvServer(t))
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

// `rootkeeper --hidden` (what start at login runs) comes up in the tray
// with its window unmapped; plain `rootkeeper` maps it. Both run under Xvfb
// with the test tray host of gui/internal/traytest on a private bus, and
// the window's map state is read with xwininfo.
func TestHiddenStartsInTheTrayWithTheWindowClosed(t *testing.T) {
	if testing.Short() {
		t.Skip("GUI test skipped with -short")
	}
	for _, tool := range []string{"Xvfb", "dbus-run-session", "xwininfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (run .ci/setup)", tool)
		}
	}
	tray := filepath.Join(t.TempDir(), "traytest")
	if out, err := exec.Command("go", "build", "-o", tray, "./gui/internal/traytest").CombinedOutput(); err != nil {
		t.Fatalf("building traytest: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		flag     string
		viewable bool
	}{{"", true}, {"--hidden", false}} {
		t.Run("flag="+tc.flag, func(t *testing.T) {
			// The killed app's last writes (logs of its server) may land
			// after the kill: remove its state folder with retries.
			state, err := os.MkdirTemp("", "rootkeeper-hidden-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				apptest.Eventually(t, "the killed app's state folder removed", func() (bool, string) {
					err := os.RemoveAll(state)
					return err == nil, fmt.Sprint(err)
				})
			})
			folder := filepath.Join(t.TempDir(), "alpha")
			os.Mkdir(folder, 0o755)
			mustRun(t, state, "roots", "add", folder, "--enable")
			mustRun(t, state, "servers", "add", "idle", "--", "sleep", "600")
			mustRun(t, state, "grant", "idle", folder)
			dpy := apptest.XServer(t, "1024x768")
			args := []string{"--", tray, "-click", "alpha", "-timeout", "60s", "--", binary, "--state-dir", state}
			if tc.flag != "" {
				args = append(args, tc.flag)
			}
			cmd := exec.Command("dbus-run-session", args...)
			cmd.Env = apptest.WithDisplay(serverEnv(), dpy)
			apptest.OwnGroup(cmd)
			// Xvfb or the bus may outlive the group kill holding stderr.
			cmd.WaitDelay = 2 * time.Second
			var logs strings.Builder
			cmd.Stderr = &logs
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				stdin.Close()
				apptest.KillGroup(cmd)
				cmd.Wait()
				if t.Failed() {
					t.Logf("app and tray host:\n%s", logs.String())
				}
			})
			ready := make(chan bool, 1)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					if strings.HasPrefix(sc.Text(), "ready ") {
						ready <- true
					}
				}
				ready <- false
			}()
			select {
			case ok := <-ready:
				if !ok {
					t.Fatal("the tray host ended before the app's tray item was ready")
				}
			case <-time.After(90 * time.Second):
				t.Fatal("the app's tray item was not ready within 90 s")
			}
			if tc.viewable {
				apptest.Eventually(t, "a window named Rootkeeper viewable", func() (bool, string) {
					states := windowStates(t, dpy, "Rootkeeper")
					return slices.Contains(states, "IsViewable"), fmt.Sprintf("%q", states)
				})
				return
			}
			// An idle window: nothing marks a window's not coming; one
			// that would open has these 10 s to map (it maps in about
			// one), then the screen is looked at.
			time.Sleep(10 * time.Second)
			if states := windowStates(t, dpy, "Rootkeeper"); slices.Contains(states, "IsViewable") {
				t.Fatalf("windows named Rootkeeper: %q; want none viewable at a hidden start", states)
			}
		})
	}
}

// windowStates is the map state (IsViewable, IsUnMapped, …) of every X
// window called name on display dpy.
func windowStates(t *testing.T, dpy, name string) []string {
	t.Helper()
	tree, err := exec.Command("xwininfo", "-display", dpy, "-root", "-tree").Output()
	if err != nil {
		t.Fatalf("xwininfo -tree: %v %s", err, stderrOf(err))
	}
	var states []string
	for _, line := range strings.Split(string(tree), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || !strings.Contains(line, `"`+name+`"`) {
			continue
		}
		info, err := exec.Command("xwininfo", "-display", dpy, "-id", fields[0]).Output()
		if err != nil {
			continue // gone meanwhile
		}
		for _, l := range strings.Split(string(info), "\n") {
			if s, ok := strings.CutPrefix(strings.TrimSpace(l), "Map State: "); ok {
				states = append(states, s)
			}
		}
	}
	return states
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
