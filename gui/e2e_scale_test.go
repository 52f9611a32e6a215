package gui

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// TestEndToEndAtScale runs the real binary under Xvfb with a tray host
// (internal/traytest) at 1,000 folders × 20 real servers
// (server-filesystem), each allowed 50 folders, as issue 12 measures it:
// the window's rows are drawn within 10 s of launch, the tray has at most
// 40 items, the app uses at most 30 CPU ticks in 20 idle seconds and at
// most 250 MB of memory. With ROOTKEEPER_SCALE_SHOT=FILE it also writes a
// screenshot taken 9 s after launch, to look at.
//
// It needs xvfb-run, dbus-run-session and the npm servers; it skips
// without them (and with -short), except under CI, where it fails.
func TestEndToEndAtScale(t *testing.T) {
	scaleServers := 20
	if n, err := strconv.Atoi(os.Getenv("ROOTKEEPER_SCALE_SERVERS")); err == nil {
		scaleServers = n
	}
	if testing.Short() {
		t.Skip("end-to-end test skipped with -short")
	}
	root := apptest.ModuleRoot(t)
	fsServer := filepath.Join(root, ".ci", "npm", "node_modules", ".bin", "mcp-server-filesystem")
	need(t, "xvfb-run")
	need(t, "dbus-run-session")
	if _, err := os.Stat(fsServer); err != nil {
		missing(t, "server-filesystem (run npm ci in .ci/npm): "+err.Error())
	}
	bin := t.TempDir()
	rk := filepath.Join(bin, "rootkeeper")
	tray := filepath.Join(bin, "traytest")
	goBuild(t, root, rk, ".")
	goBuild(t, root, tray, "./gui/internal/traytest")

	// 1,000 real folders, 20 servers, 50 grants each.
	src, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	store := mustStore(t, state)
	core, err := app.NewCore(store)
	if err != nil {
		t.Fatal(err)
	}
	err = core.Update(func(s *app.State) error {
		for i := range 1000 {
			p := filepath.Join(src, fmt.Sprintf("project-%d", i+1))
			if err := os.Mkdir(p, 0o755); err != nil {
				return err
			}
			s.Roots = append(s.Roots, app.Root{Path: p, Name: filepath.Base(p), Source: app.SourceGit, Enabled: true,
				Added: time.Now().UTC().Add(time.Duration(i) * time.Second)})
		}
		for j := range scaleServers {
			srv := app.Server{Name: fmt.Sprintf("server-%d", j+1), Type: app.TransportStdio, Command: fsServer}
			if err := s.AddServer(srv); err != nil {
				return err
			}
		}
		var ds []app.Decision
		for j, srv := range s.Servers {
			for k := range 50 {
				ds = append(ds, app.Decision{Server: srv.Name, Root: s.Roots[(j*50+k)%1000].Path, Verdict: app.Allow, By: app.ByCommandLine})
			}
		}
		return s.DecideAll(ds)
	})
	if err != nil {
		t.Fatal(err)
	}

	shot := os.Getenv("ROOTKEEPER_SCALE_SHOT")
	script := `"$0" --state-dir "$1" 2>"$1/app.log" & pid=$!
if [ -n "$2" ]; then for s in 3 6 9 15; do sleep 3; [ $s = 3 ] || sleep 0; import -window root "$2.$s.png"; done; fi
wait $pid`
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "dbus-run-session", "--",
		tray, "-click", "project-1000", "-timeout", "60s", "--",
		"xvfb-run", "-a", "-s", "-screen 0 1280x800x24", "sh", "-c", script, rk, state, shot)
	cmd.Env = append(os.Environ(), "LANG=en_US.UTF-8")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var hostLog strings.Builder
	cmd.Stderr = &hostLog
	stdin, err := cmd.StdinPipe() // traytest waits on it; never written

	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(state, "app.log"))
			t.Logf("tray host stderr:\n%s\napp log:\n%s", hostLog.String(), log)
		}
	})
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var menu string
	expect := func(prefix string) string {
		t.Helper()
		timeout := time.After(90 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("tray host ended before %q", prefix)
				}
				if strings.HasPrefix(l, "menu ") {
					menu = strings.TrimPrefix(l, "menu ")
				} else {
					t.Log("traytest: " + l)
				}
				if strings.HasPrefix(l, prefix) {
					return l
				}
			case <-timeout:
				t.Fatalf("no %q from the tray host within 90s", prefix)
			}
		}
	}
	expect("registered ")
	// Ready: the tray shows project-1000 ticked, so the window has
	// rendered a snapshot where its health check passed and it is shared
	// (the tray is drawn in the same refresh as the window's rows).
	expect("ready ")
	ready := time.Since(start)
	t.Logf("rows drawn %.1f s after launch (goal ≤ 10 s)", ready.Seconds())
	if ready > 10*time.Second {
		t.Errorf("the window was ready %v after launch, want within 10 s", ready)
	}
	var layout item
	if err := json.Unmarshal([]byte(menu), &layout); err != nil {
		t.Fatalf("tray menu %q: %v", menu, err)
	}
	items := countItems(layout) - 1 // the root node is not an item
	t.Logf("tray: %d items (goal ≤ 40)", items)
	if items > 40 {
		t.Errorf("the tray has %d items, want at most 40", items)
	}

	pid := findProcess(t, rk)
	// Let the servers connect and the first sweep settle, then measure.
	waitConnected(t, rk, state, scaleServers, 60*time.Second)
	time.Sleep(5 * time.Second)
	before := cpuTicks(t, pid)
	time.Sleep(20 * time.Second)
	idle := cpuTicks(t, pid) - before
	rss := rssMB(t, pid)
	t.Logf("idle: %d CPU ticks in 20 s (goal ≤ 30); memory %d MB (goal ≤ 250)", idle, rss)
	if idle > 30 {
		t.Errorf("%d CPU ticks in 20 idle seconds, want at most 30", idle)
	}
	if rss > 250 {
		t.Errorf("%d MB resident, want at most 250", rss)
	}

	stdin.Close() // the tray host ends with the app (killed at cleanup)
}

// item is one node of a dbusmenu layout, as traytest prints it.
type item struct {
	Label    string `json:"label,omitempty"`
	Children []item `json:"children,omitempty"`
}

func countItems(it item) int {
	n := 1
	for _, c := range it.Children {
		n += countItems(c)
	}
	return n
}

// findProcess finds the process running the binary at path.
func findProcess(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		dirs, _ := os.ReadDir("/proc")
		for _, d := range dirs {
			pid, err := strconv.Atoi(d.Name())
			if err != nil {
				continue
			}
			if exe, err := os.Readlink(filepath.Join("/proc", d.Name(), "exe")); err == nil && exe == path {
				return pid
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no process runs %s", path)
	return 0
}

// cpuTicks is the user and system time of pid, in clock ticks.
func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.Atoi(fields[11])
	stime, _ := strconv.Atoi(fields[12])
	return utime + stime
}

// rssMB is the resident memory of pid, in MB.
func rssMB(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb / 1024
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// waitConnected waits until n servers are connected, as status says.
func waitConnected(t *testing.T, rk, state string, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	connected := 0
	for time.Now().Before(deadline) {
		out, err := exec.Command(rk, "--state-dir", state, "status", "--json").Output()
		if err == nil {
			var st struct {
				Servers []struct {
					Live *app.ServerStatus `json:"live"`
				} `json:"servers"`
			}
			if json.Unmarshal(out, &st) == nil {
				connected = 0
				for _, s := range st.Servers {
					if s.Live != nil && s.Live.State == app.ServerConnected {
						connected++
					}
				}
				if connected >= n {
					return
				}
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%d of %d servers connected after %v", connected, n, within)
}
