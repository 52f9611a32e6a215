package app_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// tinyDisk mounts a tmpfs of size bytes and returns it, mode 0700; it is
// unmounted when the test ends. Only root may mount, and CI runs as root.
func tinyDisk(t *testing.T, size string) string {
	t.Helper()
	if !apptest.Privileged() {
		apptest.Missing(t, "mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mounting a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes to dir until the disk is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling: %v", err)
			}
			return
		}
	}
}

// With the disk full, a decision that cannot be saved fails, says why, and
// changes nothing: the file is intact and the published state is the saved
// one, so nothing is exposed that the file does not hold.
func TestDiskFullLosesNothingAndExposesNothing(t *testing.T) {
	dir := tinyDisk(t, "256k")
	store, err := app.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	core, err := app.NewCore(store)
	if err != nil {
		t.Fatal(err)
	}
	r1, r2 := t.TempDir(), t.TempDir()
	if err := core.Update(func(s *app.State) error {
		s.AddServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: "srv"})
		s.AddRoot(app.Root{Path: r1, Enabled: true})
		s.AddRoot(app.Root{Path: r2, Enabled: true})
		return s.Decide(app.Decision{Server: "fs", Root: r1, Verdict: app.Allow})
	}); err != nil {
		t.Fatal(err)
	}
	core.SetHealth(r1, app.Health{Status: app.HealthOK})
	core.SetHealth(r2, app.Health{Status: app.HealthOK})
	before, _ := os.ReadFile(store.Path())
	names := func() []string {
		ents, _ := os.ReadDir(dir)
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		return n
	}
	was := append(names(), "filler")
	slices.Sort(was)
	fill(t, dir)

	err = core.Update(func(s *app.State) error { return s.Decide(app.Decision{Server: "fs", Root: r2, Verdict: app.Allow}) })
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("saving on a full disk: %v, want ENOSPC", err)
	}
	after, _ := os.ReadFile(store.Path())
	if !bytes.Equal(before, after) {
		t.Fatal("the state file changed on a failed save")
	}
	if got := app.VisiblePaths(core.Snapshot(), "fs"); !slices.Equal(got, []string{r1}) {
		t.Fatalf("after the failed save fs sees %q, want only the saved %q", got, r1)
	}
	if now := names(); !slices.Equal(now, was) {
		t.Errorf("files on the full disk: %q, before the save %q (a temp file left)", now, was)
	}
	// Room again: the same decision saves.
	os.Remove(filepath.Join(dir, "filler"))
	if err := core.Update(func(s *app.State) error { return s.Decide(app.Decision{Server: "fs", Root: r2, Verdict: app.Allow}) }); err != nil {
		t.Fatal(err)
	}
}

// The state file edited to nonsense while the app runs: it is moved aside,
// every server sees nothing, and the person is told.
func TestNonsenseWrittenUnderTheRunningApp(t *testing.T) {
	dir := t.TempDir()
	store, _ := app.OpenStore(dir)
	core, err := app.NewCore(store)
	if err != nil {
		t.Fatal(err)
	}
	r := t.TempDir()
	core.Update(func(s *app.State) error {
		s.AddServer(app.Server{Name: "fs", Type: app.TransportStdio, Command: "srv"})
		s.AddRoot(app.Root{Path: r, Enabled: true})
		return s.Decide(app.Decision{Server: "fs", Root: r, Verdict: app.Allow})
	})
	core.SetHealth(r, app.Health{Status: app.HealthOK})
	apptest.RunCore(t, core)
	if err := os.WriteFile(store.Path(), []byte("{\"version\": 1, \"decisions\": [{\"server\": \"fs\", \"root\": "), 0o600); err != nil {
		t.Fatal(err)
	}
	apptest.Until(t, core, "after nonsense, fs sees nothing and the person is told", func(s *app.Snapshot) bool {
		return len(app.VisiblePaths(s, "fs")) == 0 && s.Notices[app.NoticeCorrupt] != ""
	})
}
