package gui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"rootkeeper/app"
)

// menuText renders a menu as lines: "[x] label", "[ ] label", "-" for a
// separator, "(label)" for a disabled item.
func menuText(m *fyne.Menu) string {
	var b strings.Builder
	for _, it := range m.Items {
		switch {
		case it.IsSeparator:
			b.WriteString("-\n")
			continue
		case it.Checked:
			b.WriteString("[x] ")
		}
		if it.Disabled {
			fmt.Fprintf(&b, "(%s)\n", it.Label)
		} else {
			b.WriteString(it.Label + "\n")
		}
	}
	return b.String()
}

func traySnapshot(paused bool) *app.Snapshot {
	ok := app.Health{Status: app.HealthOK, Checked: time.Now()}
	return &app.Snapshot{
		State: app.State{
			Roots: []app.Root{
				fakeRoot(rootA, true),  // allowed for fs: ticked
				fakeRoot(rootB, true),  // undecided: not ticked
				fakeRoot(rootC, false), // allowed but off: not ticked
				fakeRoot("/home/ada/gone", true),
			},
			Servers:   []app.Server{stdio("fs"), stdio("git")},
			Decisions: []app.Decision{allow("fs", rootA), allow("git", rootC), allow("fs", "/home/ada/gone")},
			Paused:    paused,
		},
		Health: map[string]app.Health{rootA: ok, rootB: ok, rootC: ok,
			"/home/ada/gone": {Status: app.HealthMissing}},
		Servers: map[string]app.ServerStatus{
			"fs":  {State: app.ServerConnected},
			"git": {State: app.ServerFailed, Error: "exec: not found\nmore"},
		},
	}
}

func TestTrayMenu(t *testing.T) {
	for _, tc := range []struct {
		name   string
		paused bool
		want   string
	}{
		{"sharing", false, `(Sharing 1 of 4 folders)
Pause sharing
-
fs: connected
git: failed (exec: not found)
-
gone (missing)
[x] alpha
beta
gamma
All folders…
-
Open Rootkeeper
Quit
`},
		{"paused", true, `(Sharing paused)
Resume sharing
-
fs: connected
git: failed (exec: not found)
-
(gone (missing))
(alpha)
(beta)
(gamma)
All folders…
-
Open Rootkeeper
Quit
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := menuText(trayMenuFor(traySnapshot(tc.paused), trayActions{}))
			if got != tc.want {
				t.Errorf("menu:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestTrayMenuActions(t *testing.T) {
	var calls []string
	act := trayActions{
		ToggleRoot: func(p string, on bool) { calls = append(calls, fmt.Sprintf("toggle %s %t", p, on)) },
		SetPaused:  func(p bool) { calls = append(calls, fmt.Sprintf("paused %t", p)) },
		ShowServer: func(n string) { calls = append(calls, "server "+n) },
		ShowRoots:  func() { calls = append(calls, "roots") },
		Open:       func() { calls = append(calls, "open") },
		Quit:       func() { calls = append(calls, "quit") },
	}
	m := trayMenuFor(traySnapshot(false), act)
	for _, it := range m.Items {
		if it.Action != nil && !it.Disabled {
			it.Action()
		}
	}
	want := []string{
		"paused true", "server fs", "server git", "toggle /home/ada/gone true",
		"toggle " + rootA + " false", "toggle " + rootB + " true", "toggle " + rootC + " true",
		"roots", "open", "quit",
	}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("actions:\n got %q\nwant %q", calls, want)
	}
	if last := m.Items[len(m.Items)-1]; !last.IsQuit {
		t.Error("the last item is not marked IsQuit: Fyne would add a second Quit")
	}
}

func TestTrayMenuEmpty(t *testing.T) {
	got := menuText(trayMenuFor(&app.Snapshot{}, trayActions{}))
	want := "(No folders yet)\nPause sharing\n-\nOpen Rootkeeper\nQuit\n"
	if got != want {
		t.Errorf("menu:\n%s\nwant:\n%s", got, want)
	}
}

// A folder's name or path comes from disk, not from Rootkeeper: a bidi
// override or an invisible character in it is shown escaped in the tray
// and in labels, so it cannot reorder or hide what the person reads.
func TestUntrustedNamesAreNeutralised(t *testing.T) {
	snap := &app.Snapshot{}
	if got := rootItemLabel(snap, app.Root{Name: "photos\u202egpj.exe", Path: "/x"}); got != `photos\u202egpj.exe` {
		t.Errorf("tray item %q", got)
	}
	if l := newPathLabel("/home/me/a\u200bb\nc"); l.Text != `/home/me/a\u200bb\nc` {
		t.Errorf("path label %q", l.Text)
	}
}

// scaleSnapshot is roots folders and servers servers, each server allowed
// 50 folders, every folder checked OK; servers from index failFrom on have
// failed.
func scaleSnapshot(roots, servers, failFrom int) *app.Snapshot {
	snap := &app.Snapshot{Health: map[string]app.Health{}, Servers: map[string]app.ServerStatus{}}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range roots {
		r := fakeRoot(fmt.Sprintf("/home/ada/src/project-%d", i+1), true)
		r.Added = base.Add(time.Duration(i) * time.Minute)
		snap.State.Roots = append(snap.State.Roots, r)
		snap.Health[r.Path] = app.Health{Status: app.HealthOK}
	}
	for s := range servers {
		name := fmt.Sprintf("server-%d", s+1)
		snap.State.Servers = append(snap.State.Servers, stdio(name))
		st := app.ServerStatus{State: app.ServerConnected}
		if s >= failFrom {
			st = app.ServerStatus{State: app.ServerFailed, Error: "exit status 1"}
		}
		snap.Servers[name] = st
		for j := range min(50, roots) {
			snap.State.Decisions = append(snap.State.Decisions, allow(name, snap.State.Roots[(s*50+j)%roots].Path))
		}
	}
	return snap
}

// At 1,000 folders × 20 servers the tray stays short: a summary of the
// servers with the failed ones, the fifteen most recent folders, All
// folders….
func TestTrayMenuAtScale(t *testing.T) {
	for _, tc := range []struct {
		roots, servers, failFrom int
		want                     string
	}{
		{1000, 20, 18, `(Sharing 1000 of 1000 folders)
Pause sharing
-
20 servers: 18 connected, 2 failed
server-19: failed (exit status 1)
server-20: failed (exit status 1)
-
[x] project-986
[x] project-987
[x] project-988
[x] project-989
[x] project-990
[x] project-991
[x] project-992
[x] project-993
[x] project-994
[x] project-995
[x] project-996
[x] project-997
[x] project-998
[x] project-999
[x] project-1000
All folders…
-
Open Rootkeeper
Quit
`},
		{3, 8, 8, `(Sharing 3 of 3 folders)
Pause sharing
-
server-1: connected
server-2: connected
server-3: connected
server-4: connected
server-5: connected
server-6: connected
server-7: connected
server-8: connected
-
[x] project-1
[x] project-2
[x] project-3
All folders…
-
Open Rootkeeper
Quit
`},
	} {
		t.Run(fmt.Sprintf("%dx%d", tc.roots, tc.servers), func(t *testing.T) {
			m := trayMenuFor(scaleSnapshot(tc.roots, tc.servers, tc.failFrom), trayActions{})
			if got := menuText(m); got != tc.want {
				t.Errorf("menu:\n%s\nwant:\n%s", got, tc.want)
			}
			if len(m.Items) > 40 {
				t.Errorf("%d items, want at most 40", len(m.Items))
			}
		})
	}
	// Even with every one of 100 servers failing, at most 40 items; and
	// with 64 folders they tried waiting, and the scan's line, too.
	if n := len(trayMenuFor(scaleSnapshot(1000, 100, 0), trayActions{}).Items); n > 40 {
		t.Errorf("100 failing servers: %d items", n)
	}
	snap := scaleSnapshot(1000, 100, 0)
	for i := range app.MaxRequestsPerServer {
		snap.State.Requests = append(snap.State.Requests, app.Request{Server: "server-1", Path: fmt.Sprintf("/srv/%d", i),
			From: app.FromReach, Tried: fmt.Sprintf("/srv/%d/x", i), Op: app.OpRead})
	}
	if n := len(trayMenuFor(snap, trayActions{Finding: "3 projects found"}).Items); n > 40 {
		t.Errorf("100 failing servers, 64 requests and the scan's line: %d items", n)
	}
}

// Tray menu rebuild at 1,000 folders × 20 servers (goal: one frame, 16 ms),
// against building the snapshot's grid alone, its largest part.
func BenchmarkTrayMenu(b *testing.B) {
	snap := scaleSnapshot(1000, 20, 18)
	b.Run("menu", func(b *testing.B) {
		for b.Loop() {
			menuKey(trayMenuFor(snap, trayActions{}))
		}
	})
	b.Run("grid", func(b *testing.B) {
		for b.Loop() {
			app.NewGrid(snap)
		}
	})
}

// A server held by a folder of its configuration says in the tray what it
// waits for, with the path as people write it.
func TestTrayShowsAHeldServer(t *testing.T) {
	home := t.TempDir()
	work := filepath.Join(home, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	work, _ = filepath.EvalSymlinks(work)
	home = filepath.Dir(work)
	st := app.State{}
	if _, err := st.PutServer(app.Server{Name: "git", Type: app.TransportStdio, Command: "git-mcp-server", Env: map[string]string{"GIT_BASE_DIR": work}},
		app.PutOptions{Home: home}); err != nil {
		t.Fatal(err)
	}
	snap := &app.Snapshot{State: st, Servers: map[string]app.ServerStatus{"git": {State: app.ServerHeld}}}
	if got := menuText(trayMenuFor(snap, trayActions{Home: home})); !strings.Contains(got, "git: held, waiting for your decision on ~/work\n") {
		t.Errorf("menu:\n%s", got)
	}
}

// Folders confined servers tried wait in the tray, newest first, three of
// them and a count of the rest; each opens the window on its request.
// Requests of hosts are not listed there (their servers' lines say they
// are held). The tray stays a function of the snapshot.
func TestTrayMenuListsReachRequests(t *testing.T) {
	snap := traySnapshot(false)
	at := time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)
	for i, dir := range []string{"a", "b", "c", "d"} {
		snap.State.Requests = append(snap.State.Requests, app.Request{Server: "fs", Path: "/home/ada/" + dir, From: app.FromReach,
			First: at.Add(time.Duration(i) * time.Minute), Last: at.Add(time.Duration(i) * time.Minute),
			Tried: "/home/ada/" + dir + "/x.txt", Op: app.OpRead})
	}
	snap.State.Requests = append(snap.State.Requests, app.Request{Server: "git", Path: "/home/ada/h", From: "claude-code", First: at, Last: at})
	var shown []string
	act := trayActions{Home: "/home/ada", ShowRequest: func(server, path string) { shown = append(shown, server+" "+path) },
		Open: func() { shown = append(shown, "open") }}
	m := trayMenuFor(snap, act)
	got := menuText(m)
	want := `(Sharing 1 of 4 folders)
-
fs tried to read ~/d/x.txt — allow ~/d?
fs tried to read ~/c/x.txt — allow ~/c?
fs tried to read ~/b/x.txt — allow ~/b?
1 more waiting for your answer…
-
`
	if !strings.Contains(got, want[len("(Sharing 1 of 4 folders)\n"):]) {
		t.Fatalf("menu:\n%s\nwant in it:\n%s", got, want)
	}
	for _, it := range m.Items {
		if strings.HasPrefix(it.Label, "fs tried") || strings.HasSuffix(it.Label, "for your answer…") {
			it.Action()
		}
	}
	if w := []string{"fs /home/ada/d", "fs /home/ada/c", "fs /home/ada/b", "open"}; fmt.Sprint(shown) != fmt.Sprint(w) {
		t.Errorf("clicks showed %q, want %q", shown, w)
	}
}

// A server stopped as hostile says so in the tray, as a failed one says
// why; one stopped by the person says only that.
func TestTrayShowsWhyAServerStopped(t *testing.T) {
	st := app.State{}
	for _, name := range []string{"deaf", "idle"} {
		if err := st.AddServer(app.Server{Name: name, Type: app.TransportStdio, Command: name + "-mcp"}); err != nil {
			t.Fatal(err)
		}
	}
	snap := &app.Snapshot{State: st, Servers: map[string]app.ServerStatus{
		"deaf": {State: app.ServerStopped, Error: "hostile: it sent 64 requests (4 KiB) and read none of their answers for 10s (restart it to try again)"},
		"idle": {State: app.ServerStopped},
	}}
	got := menuText(trayMenuFor(snap, trayActions{}))
	if !strings.Contains(got, "deaf: stopped (hostile: it sent 64 requests") || !strings.Contains(got, "idle: stopped\n") {
		t.Errorf("menu:\n%s", got)
	}
}
