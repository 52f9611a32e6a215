package gui

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/audit"
)

// TestEndToEndTrayToggle runs the real binary under Xvfb and a private
// session bus, with a tray host written for the test (internal/traytest)
// that reads the tray menu over com.canonical.dbusmenu and clicks it.
// Unticking a root in the tray must take it away from a real
// server-filesystem: the app answers its next roots/list without it.
//
// It needs Xvfb, dbus-run-session and the npm servers in .ci/npm; it
// skips without them, except under CI, where it fails.
func TestEndToEndTrayToggle(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped with -short")
	}
	root := apptest.ModuleRoot(t)
	fsServer := filepath.Join(root, ".ci", "npm", "node_modules", ".bin", "mcp-server-filesystem")
	apptest.NeedProgram(t, "Xvfb")
	apptest.NeedProgram(t, "dbus-run-session")
	if _, err := os.Stat(fsServer); err != nil {
		apptest.Missing(t, "server-filesystem (run npm ci in .ci/npm): "+err.Error())
	}

	bin := t.TempDir()
	rk := filepath.Join(bin, "rootkeeper")
	tray := filepath.Join(bin, "traytest")
	goBuild(t, root, rk, ".")
	goBuild(t, root, tray, "./gui/internal/traytest")

	state := t.TempDir()
	folder := filepath.Join(t.TempDir(), "alpha")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(rk, append([]string{"--state-dir", state}, args...)...)
		cmd.Env = append(os.Environ(), "LANG=en_US.UTF-8")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("rootkeeper %s: %v\n%s", strings.Join(args, " "), err, stderrOf(err))
		}
		return out
	}
	cli("roots", "add", folder, "--enable")
	cli("servers", "add", "fs", "--", fsServer)
	cli("grant", "fs", folder)
	canon, err := filepath.EvalSymlinks(folder)
	if err != nil {
		t.Fatal(err)
	}
	uri := app.URIFromPath(canon)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "dbus-run-session", "--",
		tray, "-click", "alpha", "-timeout", "60s", "--", rk, "--state-dir", state)
	cmd.Env = append(apptest.WithDisplay(nil, apptest.XServer(t, "1280x800")), "LANG=en_US.UTF-8")
	apptest.OwnGroup(cmd)
	cmd.Cancel = func() error { return apptest.KillGroup(cmd) }
	var appLog strings.Builder
	cmd.Stderr = &appLog
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		apptest.KillGroup(cmd)
		if t.Failed() {
			t.Logf("app and tray host stderr:\n%s", appLog.String())
		}
	})
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(prefix string) string {
		t.Helper()
		timeout := time.After(90 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("tray host ended before %q", prefix)
				}
				t.Log("traytest: " + l)
				if strings.HasPrefix(l, prefix) {
					return l
				}
			case <-timeout:
				t.Fatalf("no %q from the tray host within 90s", prefix)
			}
		}
	}

	expect("registered ")
	expect("ready ")
	// Before the click: server-filesystem was sent the folder.
	before := waitStatus(t, cli, func(s liveStatus) bool {
		return s.State == app.ServerConnected && slices.Equal(s.LastSent, []string{uri})
	})

	io.WriteString(stdin, "click\n")
	expect("clicked ")
	expect("unchecked ")

	// After: the app answered server-filesystem's next roots/list without it.
	waitStatus(t, cli, func(s liveStatus) bool {
		return len(s.LastSent) == 0 && s.LastSentAt.After(before.LastSentAt)
	})
	st, err := mustStore(t, state).Load()
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := st.Root(canon); !ok || r.Enabled {
		t.Errorf("state after the click: root %+v (found %t), want it disabled", r, ok)
	}
	if _, ok := st.Decision("fs", canon); !ok {
		t.Error("the tray click forgot the decision; it should only turn the folder off")
	}
	entries, err := audit.Read(state, "fs")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(entries); n < 2 || len(entries[n-1].Roots) != 0 || entries[n-1].Via != audit.ViaRootsList {
		t.Errorf("audit log: %+v, want a last roots/list answer with no roots", entries)
	}

	// A second launch raises the running window and exits at once, instead
	// of starting a second app (it needs no display to do so).
	second := exec.CommandContext(ctx, rk, "--state-dir", state)
	second.Env = append(os.Environ(), "LANG=en_US.UTF-8", "DISPLAY=")
	if out, err := second.CombinedOutput(); err != nil {
		t.Errorf("second launch: %v\n%s", err, out)
	}
	if !strings.Contains(string(cli("status", "--json")), `"running": true`) {
		t.Error("the first app stopped answering after the second launch")
	}

	// Quit from the tray ends the app.
	stdin.Close()
	expect("quit 0")
	if err := cmd.Wait(); err != nil {
		t.Errorf("dbus-run-session: %v", err)
	}
}

type liveStatus = app.ServerStatus

// waitStatus asks `rootkeeper status --json` until ok accepts fs's live
// status, and returns it.
func waitStatus(t *testing.T, cli func(...string) []byte, ok func(liveStatus) bool) liveStatus {
	t.Helper()
	var got liveStatus
	apptest.Eventually(t, "fs to reach the wanted status", func() (bool, string) {
		var st struct {
			Servers []struct {
				Name string            `json:"name"`
				Live *app.ServerStatus `json:"live"`
			} `json:"servers"`
		}
		out := cli("status", "--json")
		if err := json.Unmarshal(out, &st); err != nil {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		for _, s := range st.Servers {
			if s.Name == "fs" && s.Live != nil && ok(*s.Live) {
				got = *s.Live
				return true, ""
			}
		}
		return false, string(out)
	})
	return got
}

func mustStore(t testing.TB, dir string) *app.Store {
	s, err := app.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func goBuild(t testing.TB, dir, out, pkg string, flags ...string) {
	t.Helper()
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", out, pkg)...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
