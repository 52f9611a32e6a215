package gui

import (
	"fmt"
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
[x] alpha
beta
gamma
gone (missing)
-
Pause sharing
-
fs: connected
git: failed (exec: not found)
-
Open Rootkeeper
Quit
`},
		{"paused", true, `(Sharing paused)
(alpha)
(beta)
(gamma)
(gone (missing))
-
Resume sharing
-
fs: connected
git: failed (exec: not found)
-
Open Rootkeeper
Quit
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := menuText(trayMenu(traySnapshot(tc.paused), trayActions{}))
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
		Open:       func() { calls = append(calls, "open") },
		Quit:       func() { calls = append(calls, "quit") },
	}
	m := trayMenu(traySnapshot(false), act)
	for _, it := range m.Items {
		if it.Action != nil && !it.Disabled {
			it.Action()
		}
	}
	want := []string{
		"toggle " + rootA + " false", "toggle " + rootB + " true", "toggle " + rootC + " true",
		"toggle /home/ada/gone true", "paused true", "server fs", "server git", "open", "quit",
	}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("actions:\n got %q\nwant %q", calls, want)
	}
	if last := m.Items[len(m.Items)-1]; !last.IsQuit {
		t.Error("the last item is not marked IsQuit: Fyne would add a second Quit")
	}
}

func TestTrayMenuEmpty(t *testing.T) {
	got := menuText(trayMenu(&app.Snapshot{}, trayActions{}))
	want := "(No folders yet)\n-\nPause sharing\n-\nOpen Rootkeeper\nQuit\n"
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
