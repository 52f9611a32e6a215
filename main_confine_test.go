package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/mcp/confine"
)

// The real binary starts a server added with --confine through its own
// __confine re-exec: the server process is the server (not rootkeeper),
// runs under no_new_privs, and status says which servers are confined and
// under which Landlock ABI, and which only get advice.
func TestConfinedServerThroughTheBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Landlock is Linux's")
	}
	abi, err := confine.ABI()
	if err != nil {
		t.Fatalf("Landlock: %v", err)
	}
	kernel, _ := confine.KernelABI() // above abi where ROOTKEEPER_LANDLOCK_ABI caps it
	nosy := apptest.Program(t, "mcp/confine/testdata/nosy")
	state := t.TempDir()
	folder := filepath.Join(t.TempDir(), "project")
	os.Mkdir(folder, 0o755)
	out := mustRun(t, state, "servers", "add", "boxed", "--confine", "--", nosy)
	if !strings.Contains(out, "boxed runs confined ("+app.ABIText(abi, kernel)+")") {
		t.Errorf("servers add said %q", out)
	}
	mustRun(t, state, "servers", "add", "open", "--no-confine", "--", nosy)
	mustRun(t, state, "roots", "add", folder, "--enable")
	mustRun(t, state, "grant", "boxed", folder)
	startHeadless(t, state)
	var live *app.ServerStatus
	waitFor(t, "boxed to connect", func() bool {
		_, live = lastSent(liveStatus(t, state), "boxed")
		return live != nil && live.State == app.ServerConnected && live.PID != 0
	})
	if live.LandlockABI != abi {
		t.Errorf("live LandlockABI = %d, want %d", live.LandlockABI, abi)
	}
	proc := "/proc/" + strconv.Itoa(live.PID)
	if exe, err := os.Readlink(proc + "/exe"); err != nil || exe != nosy {
		t.Errorf("the server process runs %q (%v), want %q: the re-exec did not exec the server", exe, err, nosy)
	}
	if s, err := os.ReadFile(proc + "/status"); err != nil || !strings.Contains(string(s), "NoNewPrivs:\t1") {
		t.Errorf("the confined server is not under no_new_privs (%v)", err)
	}
	text := mustRun(t, state, "status")
	if !strings.Contains(text, "boxed (stdio, roots: protocol)") ||
		!strings.Contains(text, "  "+app.CappedConfinedText(abi, kernel)+"\n") ||
		!strings.Contains(text, "  not confined: roots are advice to this server\n") {
		t.Errorf("status:\n%s", text)
	}
}

// leftovers lists what of server name is still on disk: its temp link and
// the private temp folder it led to, its data folder and the kept-aside
// data of its earlier programs, its logs.
func leftovers(state, name, temp string) []string {
	var out []string
	for _, p := range []string{filepath.Join(state, "tmp", "server-"+name), temp, filepath.Join(state, "data", name), filepath.Join(state, "previous-data", name)} {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(state, "logs", name+".log*"))
	return append(out, logs...)
}

// servers remove takes everything of a confined server with it: the link
// to its private temp folder, the folder, its data folder and its logs
// (three generations here), whether an app runs (it removes them once the
// server has stopped) or not (the command does); another server's files
// stay.
func TestRemovedServerLeavesNothingBehind(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Landlock is Linux's")
	}
	nosy := apptest.Program(t, "mcp/confine/testdata/nosy")
	for _, running := range []bool{false, true} {
		t.Run(map[bool]string{false: "no app", true: "app running"}[running], func(t *testing.T) {
			state := t.TempDir()
			mustRun(t, state, "servers", "add", "boxed", "--confine", "--", nosy)
			mustRun(t, state, "servers", "add", "other", "--confine", "--", nosy)
			h := startHeadless(t, state)
			temps := map[string]string{}
			waitFor(t, "both servers connected, confined", func() bool {
				for _, name := range []string{"boxed", "other"} {
					_, live := lastSent(liveStatus(t, state), name)
					if live == nil || live.State != app.ServerConnected {
						return false
					}
					p, ok := app.ResolveServerTemp(filepath.Join(state, "tmp", "server-"+name))
					if !ok {
						return false
					}
					temps[name] = p
				}
				return true
			})
			for _, name := range []string{"boxed", "other"} {
				// What the server keeps, and older generations of its
				// log (rotation's).
				os.MkdirAll(filepath.Join(state, "data", name, "cache"), 0o700)
				os.WriteFile(filepath.Join(state, "data", name, "cache", "db"), []byte("kept"), 0o600)
				// An earlier program's data, kept aside.
				os.MkdirAll(filepath.Join(state, "previous-data", name, "20260501T100000Z"), 0o700)
				os.WriteFile(filepath.Join(temps[name], "scratch"), []byte("tmp"), 0o600)
				for _, gen := range []string{".1", ".2"} {
					os.WriteFile(filepath.Join(state, "logs", name+".log"+gen), []byte("old"), 0o600)
				}
			}
			if !running {
				if err := h.stop(); err != nil {
					t.Fatal(err)
				}
			}
			if got := leftovers(state, "boxed", temps["boxed"]); len(got) != 7 {
				t.Fatalf("before the remove, boxed has %q; want its link, temp, data and kept data folders and three logs", got)
			}
			mustRun(t, state, "servers", "remove", "boxed")
			waitFor(t, "nothing of boxed left", func() bool { return len(leftovers(state, "boxed", temps["boxed"])) == 0 })
			if got := leftovers(state, "other", temps["other"]); len(got) != 7 {
				t.Errorf("the other server kept only %q", got)
			}
		})
	}
}
