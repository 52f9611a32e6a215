package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The store tests re-execute the test binary to get real second processes.
// The child's role comes from ROOTKEEPER_STORE_CHILD.
func TestMain(m *testing.M) {
	switch os.Getenv("ROOTKEEPER_STORE_CHILD") {
	case "":
		os.Exit(m.Run())
	case "writer":
		storeWriterChild()
	case "crash-before-rename":
		storeCrashChild()
	}
	os.Exit(3)
}

// storeWriterChild adds N servers named PREFIX-i, one Update each.
func storeWriterChild() {
	dir, prefix := os.Getenv("STORE_DIR"), os.Getenv("STORE_PREFIX")
	n, _ := strconv.Atoi(os.Getenv("STORE_N"))
	s, err := OpenStore(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := s.Update(func(st *State) error {
			return st.AddServer(Server{Name: name, Type: TransportStdio, Command: "x"})
		}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Exit(0)
}

// storeCrashChild dies by SIGKILL after writing and syncing the temp file,
// before the rename that would publish it.
func storeCrashChild() {
	s, err := OpenStore(os.Getenv("STORE_DIR"))
	if err != nil {
		os.Exit(1)
	}
	beforeRename = killSelf
	s.Update(func(st *State) error {
		return st.AddServer(Server{Name: "never-saved", Type: TransportStdio, Command: "x"})
	})
	os.Exit(0) // not reached
}

func child(t *testing.T, role string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "ROOTKEEPER_STORE_CHILD="+role), env...)
	return cmd
}

// openCore is a store in a folder of its own and a core on it, for this
// package's tests (apptest.NewCore imports this package, so they cannot
// use it).
func openCore(t *testing.T) (*Store, *Core) {
	t.Helper()
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	core, err := NewCore(store)
	if err != nil {
		t.Fatal(err)
	}
	return store, core
}

func TestConcurrentProcessesLoseNoUpdate(t *testing.T) {
	dir := t.TempDir()
	const procs, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for p := 0; p < procs; p++ {
		cmd := child(t, "writer", "STORE_DIR="+dir, fmt.Sprintf("STORE_PREFIX=p%d", p), fmt.Sprintf("STORE_N=%d", each))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("writer: %v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s, _ := OpenStore(dir)
	st, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Servers) != procs*each {
		t.Fatalf("%d servers saved, want %d: updates were lost", len(st.Servers), procs*each)
	}
	for p := 0; p < procs; p++ {
		for i := 0; i < each; i++ {
			if _, ok := st.Server(fmt.Sprintf("p%d-%d", p, i)); !ok {
				t.Fatalf("server p%d-%d was lost", p, i)
			}
		}
	}
}

func TestKilledBeforeRenameLeavesOldStateIntact(t *testing.T) {
	dir := t.TempDir()
	s, _ := OpenStore(dir)
	if _, err := s.Update(func(st *State) error {
		return st.AddServer(Server{Name: "kept", Type: TransportStdio, Command: "x"})
	}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(s.Path())

	err := child(t, "crash-before-rename", "STORE_DIR="+dir).Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !killedHard(exit) {
		t.Fatalf("child did not die by SIGKILL: %v", err)
	}
	after, _ := os.ReadFile(s.Path())
	if string(before) != string(after) {
		t.Fatalf("state file changed by a writer killed before rename:\n%s", after)
	}
	// What the dead writer wrote is left where it wrote it: the spare
	// (Linux) or a temp file.
	left, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
	if spare, err := os.ReadFile(filepath.Join(dir, spareName)); err == nil {
		if !strings.Contains(string(spare), "never-saved") {
			t.Fatalf("the spare does not hold the dead writer's bytes:\n%s", spare)
		}
		left = append(left, spareName)
	}
	if len(left) != 1 {
		t.Fatalf("want the dead writer's file left behind, found %v", left)
	}
	st, err := s.Load()
	if err != nil || len(st.Servers) != 1 || st.Servers[0].Name != "kept" {
		t.Fatalf("after crash: %v %+v", err, st.Servers)
	}
	// The next write cleans up after the dead one (and after one that
	// died writing a temp file), and saves.
	if err := os.WriteFile(filepath.Join(dir, tempPrefix+"123"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(func(st *State) error { st.Paused = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if temps, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*")); len(temps) != 0 {
		t.Fatalf("stale temp files not removed: %v", temps)
	}
	if st, err := s.Load(); err != nil || !st.Paused || len(st.Servers) != 1 || st.Servers[0].Name != "kept" {
		t.Fatalf("after the next write: %v paused %v %+v", err, st.Paused, st.Servers)
	}
}

func TestCorruptFileIsMovedAsideAndReported(t *testing.T) {
	for name, content := range map[string]string{
		"garbage":    "\x00\x01 this is not json",
		"truncated":  `{"version": 1, "roots": [{"path": "/a", "ena`,
		"empty":      "",
		"no version": `{"roots": []}`,
		"bad root":   `{"version": 1, "roots": [{"path": "relative/x"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, _ := OpenStore(dir)
			os.WriteFile(s.Path(), []byte(content), 0o600)
			var reported *CorruptError
			s.OnCorrupt = func(e *CorruptError) { reported = e }
			st, err := s.Load()
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if len(st.Roots)+len(st.Servers)+len(st.Decisions) != 0 {
				t.Fatalf("corrupt file gave a non-empty state: %+v", st)
			}
			if reported == nil {
				t.Fatal("corruption was not reported")
			}
			if !strings.Contains(reported.MovedTo, StateFileName+".corrupt-") || strings.Contains(reported.Error(), "\n") {
				t.Fatalf("bad report: %q", reported.Error())
			}
			moved, err := os.ReadFile(reported.MovedTo)
			if err != nil || string(moved) != content {
				t.Fatalf("the corrupt file was not preserved at %s: %v", reported.MovedTo, err)
			}
			if _, err := os.Stat(s.Path()); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("corrupt file still in place: %v", err)
			}
		})
	}
}

func TestCoreStartsWithNothingExposedAndANoticeOnCorruptFile(t *testing.T) {
	dir := t.TempDir()
	s, _ := OpenStore(dir)
	os.WriteFile(s.Path(), []byte("{nope"), 0o600)
	c, err := NewCore(s)
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Snapshot().Notices[NoticeCorrupt]; !strings.Contains(n, "moved it to") {
		t.Fatalf("notice = %q", n)
	}
}

func TestNewerVersionIsRefusedNotOverwritten(t *testing.T) {
	dir := t.TempDir()
	s, _ := OpenStore(dir)
	content := `{"version": 99, "roots": []}`
	os.WriteFile(s.Path(), []byte(content), 0o600)
	_, err := s.Update(func(st *State) error { st.Paused = true; return nil })
	var verr *VersionError
	if !errors.As(err, &verr) || verr.Version != 99 {
		t.Fatalf("err = %v, want a VersionError", err)
	}
	if got, _ := os.ReadFile(s.Path()); string(got) != content {
		t.Fatalf("newer file was overwritten: %s", got)
	}
}

func TestMigrationFromVersion0(t *testing.T) {
	dir := t.TempDir()
	s, _ := OpenStore(dir)
	v0, err := os.ReadFile("testdata/state-v0.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(s.Path(), v0, 0o600)
	st, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := []Decision{{Server: "fs", Root: "/home/p/src", Verdict: Allow, Scope: Always, By: ByCommandLine,
		At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}
	if !slices.Equal(st.Decisions, want) {
		t.Fatalf("migrated decisions = %+v, want %+v", st.Decisions, want)
	}
	if st.Version != 0 && st.Version != StateVersion {
		t.Fatalf("version %d", st.Version)
	}
	if _, err := s.Update(func(*State) error { return nil }); err != nil {
		t.Fatal(err)
	}
	again, _ := s.Load()
	if again.Version != StateVersion || !slices.Equal(again.Decisions, want) {
		t.Fatalf("after save: %+v", again)
	}
}

func TestFailedUpdateWritesNothing(t *testing.T) {
	dir := t.TempDir()
	s, _ := OpenStore(dir)
	s.Update(func(st *State) error { st.Paused = true; return nil })
	before, _ := os.ReadFile(s.Path())
	_, err := s.Update(func(st *State) error {
		st.Paused = false
		return st.AddServer(Server{Name: "", Type: TransportStdio})
	})
	if err == nil {
		t.Fatal("invalid server accepted")
	}
	if after, _ := os.ReadFile(s.Path()); string(after) != string(before) {
		t.Fatal("a failed update changed the file")
	}
}

// The core picks up what another writer saved: before its watch was in
// place (Run looks once when it starts watching), and after.
func TestCoreReloadsChangesFromAnotherWriter(t *testing.T) {
	dir := t.TempDir()
	s, _ := OpenStore(dir)
	c, err := NewCore(s)
	if err != nil {
		t.Fatal(err)
	}
	ch, stop := c.Subscribe()
	defer stop()
	// Another process (here: another Store on the same folder) writes.
	other, _ := OpenStore(dir)
	setPaused := func(p bool) {
		t.Helper()
		if _, err := other.Update(func(st *State) error { st.Paused = p; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	waitPaused := func(want bool, what string) {
		t.Helper()
		hung := time.After(30 * time.Second)
		for c.Snapshot().State.Paused != want {
			select {
			case <-ch:
			case <-hung:
				t.Fatalf("the core did not pick up the other writer's change %s (hung?)", what)
			}
		}
	}
	setPaused(true) // before the core watches
	ctx, cancel := contextWithCancel()
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done }) // before the folder's removal
	waitPaused(true, "made before it watched")
	setPaused(false) // the watch is in place: Run looked once it was
	waitPaused(false, "made while it watched")
}

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

// A change whose save fails is not kept: the core publishes the state on
// disk again (the revoke did not happen), and the next change starts from
// it. (The new bytes, in the spare or a temp file, are taken away before
// they replace the file, which then fails.)
func TestFailedSaveRepublishesTheStateOnDisk(t *testing.T) {
	_, core := openCore(t)
	root := t.TempDir()
	if err := core.Update(func(s *State) error {
		if err := s.AddServer(Server{Name: "fs", Type: TransportStdio, Command: "x"}); err != nil {
			return err
		}
		if err := s.AddRoot(Root{Path: root, Enabled: true, Source: SourcePicked}); err != nil {
			return err
		}
		return s.Decide(Decision{Server: "fs", Root: root, Verdict: Allow, By: ByCommandLine})
	}); err != nil {
		t.Fatal(err)
	}
	core.SetHealth(root, Health{Status: HealthOK})
	dir := core.Store().Dir()
	beforeRename = func() {
		temps, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
		for _, f := range append(temps, filepath.Join(dir, spareName)) {
			os.Remove(f)
		}
	}
	err := core.Update(func(s *State) error { s.Revoke("fs", root); return nil })
	beforeRename = func() {}
	if err == nil {
		t.Fatal("the save did not fail")
	}
	if got := VisiblePaths(core.Snapshot(), "fs"); !slices.Equal(got, []string{root}) {
		t.Fatalf("after a failed save the core shows %q; want the state on disk (%q)", got, root)
	}
	if err := core.Update(func(s *State) error {
		return s.AddServer(Server{Name: "other", Type: TransportStdio, Command: "x"})
	}); err != nil {
		t.Fatal(err)
	}
	if got := VisiblePaths(core.Snapshot(), "fs"); !slices.Equal(got, []string{root}) {
		t.Fatalf("the next change started from the unsaved one: %q", got)
	}
}

// TestVersion3KeepsItsServersOpenAndIsWrittenAs4: a version 3 state (no
// needs, refusals, data programs or network settings) loads unchanged —
// its servers keep the network they had, open — and is saved as version
// 4, which a build that knows none of those refuses to touch instead of
// dropping them.
func TestVersion3KeepsItsServersOpenAndIsWrittenAs4(t *testing.T) {
	s, _ := OpenStore(t.TempDir())
	v3 := `{"version": 3, "roots": [], "decisions": [], "paused": false, "servers": [
		{"name": "fs", "type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"], "confine": true}]}`
	if err := os.WriteFile(s.Path(), []byte(v3), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	srv, ok := st.Server("fs")
	if !ok || srv.Network != nil || !srv.Confine {
		t.Fatalf("fs after the migration: %+v", srv)
	}
	saved, err := s.Update(func(*State) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.Path())
	if saved.Version != 4 || !strings.Contains(string(data), `"version": 4`) {
		t.Errorf("saved as version %d:\n%.80s", saved.Version, data)
	}
	newer := strings.Replace(string(data), `"version": 4`, `"version": 5`, 1)
	os.WriteFile(s.Path(), []byte(newer), 0o600)
	if _, err := s.Load(); err == nil {
		t.Error("a version 5 state was read")
	}
}

// A state is published when it changes, and only then: an update that
// leaves it as it was, or a reload of what the core itself saved, publishes
// nothing (the saved bytes are compared; deep equality when the published
// state's bytes are not known, as for a folder without a file); another
// writer's change is published once.
func TestStateIsPublishedOnlyWhenItChanges(t *testing.T) {
	dir := t.TempDir()
	store, _ := OpenStore(dir)
	core, err := NewCore(store)
	if err != nil {
		t.Fatal(err)
	}
	gen := func() uint64 { return core.Snapshot().StateGen }
	step := func(what string, do func() error, published bool) {
		t.Helper()
		before := gen()
		if err := do(); err != nil {
			t.Fatal(err)
		}
		if got := gen() != before; got != published {
			t.Errorf("%s: published %v, want %v", what, got, published)
		}
	}
	unchanged := func(s *State) error { return nil }
	step("nothing changed, no file yet", func() error { return core.Update(unchanged) }, false)
	step("paused", func() error { return core.Update(func(s *State) error { s.Paused = true; return nil }) }, true)
	step("paused again", func() error { return core.Update(func(s *State) error { s.Paused = true; return nil }) }, false)
	step("reloading its own save", core.Reload, false)
	other, _ := OpenStore(dir)
	step("another writer's change", func() error {
		_, err := other.Update(func(s *State) error { s.Paused = false; return nil })
		if err == nil {
			err = core.Reload()
		}
		return err
	}, true)
	step("reloading it again", core.Reload, false)
	step("nothing changed", func() error { return core.Update(unchanged) }, false)
	if core.Snapshot().State.Paused {
		t.Error("the other writer's change is not the state published")
	}
	// A core started on a saved state knows its bytes from the start.
	again, err := NewCore(store)
	if err != nil {
		t.Fatal(err)
	}
	if again.Snapshot().stateData == nil {
		t.Error("a core started on a saved file does not know its bytes")
	}
}

// The bytes a snapshot was published with stay what the file held then,
// however often the store reads the file again (into a buffer of its own,
// when it holds what was read before).
func TestPublishedBytesAreNeverReadInto(t *testing.T) {
	store, core := openCore(t)
	if err := core.Update(func(s *State) error {
		for i := range 20 {
			if err := s.AddServer(Server{Name: fmt.Sprintf("s%d", i), Type: TransportStdio, Command: "x"}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	type published struct{ data, copied []byte }
	var seen []published
	for i := range 6 {
		if err := core.Update(func(s *State) error { s.Paused = i%2 == 0; return nil }); err != nil {
			t.Fatal(err)
		}
		if err := core.Reload(); err != nil {
			t.Fatal(err)
		}
		onDisk, _ := os.ReadFile(store.Path())
		data := core.Snapshot().stateData
		if string(data) != string(onDisk) {
			t.Fatalf("update %d: published\n%s\nthe file holds\n%s", i, data, onDisk)
		}
		seen = append(seen, published{data, slices.Clone(data)})
	}
	for i, p := range seen {
		if string(p.data) != string(p.copied) {
			t.Fatalf("the bytes published at update %d changed since", i)
		}
	}
}
