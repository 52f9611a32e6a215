package hosts

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"rootkeeper/app"
	"rootkeeper/app/policy"
)

// A server an earlier version protected had its folders taken off (its
// command line and, from the host's file, its env). RepairTakenOff puts
// them back from the backup, as slots, keeping the decision the person
// made meanwhile; a server with no backup to repair from stays held.
func TestRepairTakenOffFromTheBackup(t *testing.T) {
	h, _ := Lookup("codex")
	w, project, store := testWorld(t)
	install(t, h, w, "codex.toml", project)
	if _, err := Protect(h, Options{World: w, Store: store, Executable: fakeExe}); err != nil {
		t.Fatal(err)
	}
	want, _ := store.Load()
	wantFS, _ := want.Server("codex.fs")
	// What version 1 stored: the folder off the command line, the env
	// folder gone, the folder granted since; and a server added by hand
	// whose folder is still asked about.
	if _, err := store.Update(func(s *app.State) error {
		old := wantFS
		old.Args = slices.DeleteFunc(slices.Clone(old.Args), func(a string) bool { return a == project })
		old.Env, old.Slots, old.FoldersTakenOff = nil, nil, true
		storeAsVersion1(s, old)
		if err := s.DecideRequest(app.Decision{Server: "codex.fs", Root: project, Verdict: app.Allow, Scope: app.Always}); err != nil {
			return err
		}
		return s.AddServer(app.Server{Name: "byhand", Type: app.TransportStdio, Command: "srv", FoldersTakenOff: true, Lost: []string{project}})
	}); err != nil {
		t.Fatal(err)
	}

	repaired, err := RepairTakenOff(store, w.Home)
	if err != nil || !slices.Equal(repaired, []string{"codex.fs"}) {
		t.Fatalf("repaired %q, %v", repaired, err)
	}
	st, _ := store.Load()
	fs, _ := st.Server("codex.fs")
	if d := cmp.Diff(wantFS, fs); d != "" {
		t.Errorf("repaired server (-as protect stores it now +repaired):\n%s", d)
	}
	snap := &app.Snapshot{State: st}
	if h := app.HoldOf(snap, "codex.fs"); h != nil {
		t.Errorf("the granted folder does not count: %+v", h)
	}
	if h := app.HoldOf(snap, "byhand"); h == nil || !slices.Equal(h.Lost, []string{project}) {
		t.Errorf("a server with nothing to repair from: hold %+v", h)
	}
	if bh, _ := st.Server("byhand"); bh.FoldersTakenOff {
		t.Error("byhand is still marked")
	}
	// Once is enough.
	if again, err := RepairTakenOff(store, w.Home); err != nil || len(again) != 0 {
		t.Errorf("a second repair: %q, %v", again, err)
	}
}

// storeAsVersion1 stores srv over the server of its name as it is, as
// version 1 left it: nothing of today's storing (slots found, folders lost
// cleared) applies to what an older version wrote.
func storeAsVersion1(s *app.State, srv app.Server) {
	i := slices.IndexFunc(s.Servers, func(x app.Server) bool { return x.Name == srv.Name })
	s.Servers[i] = srv
}

// A repair puts back what the backup holds and no more: a folder lost
// that the original entry does not name stays lost (the server held),
// the ones it names are slots again. A server the organisation's policy
// blocks is repaired all the same (the policy keeps it from starting, the
// repair keeps its folders), and nothing but a server marked as taken off
// can be repaired.
func TestRepairTakenOffKeepsWhatItCannotPutBack(t *testing.T) {
	h, _ := Lookup("codex")
	w, project, store := testWorld(t)
	install(t, h, w, "codex.toml", project)
	if _, err := Protect(h, Options{World: w, Store: store, Executable: fakeExe}); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(w.Home, "elsewhere")
	if _, err := store.Update(func(s *app.State) error {
		old, _ := s.Server("codex.fs")
		old.Args = slices.DeleteFunc(slices.Clone(old.Args), func(a string) bool { return a == project })
		old.Env, old.Slots, old.FoldersTakenOff = nil, nil, true
		old.Lost = []string{project, elsewhere}
		storeAsVersion1(s, old)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	prev := app.Policy()
	t.Cleanup(func() { app.SetPolicy(prev) })
	app.SetPolicy(policy.Policy{Source: "test", DeniedServers: []policy.ServerRule{{Name: "codex.fs"}}})

	repaired, err := RepairTakenOff(store, w.Home)
	if err != nil || !slices.Equal(repaired, []string{"codex.fs"}) {
		t.Fatalf("repaired %q, %v", repaired, err)
	}
	st, _ := store.Load()
	fs, _ := st.Server("codex.fs")
	if fs.FoldersTakenOff || !slices.Equal(fs.Lost, []string{elsewhere}) {
		t.Errorf("lost after the repair %q (marked %v), want only %q", fs.Lost, fs.FoldersTakenOff, elsewhere)
	}
	if !slices.ContainsFunc(fs.Slots, func(sl app.Slot) bool { return sl.Path == project }) {
		t.Errorf("the folder the backup names is no slot: %+v", fs.Slots)
	}
	if _, open := st.Request("codex.fs", project); !open {
		t.Error("the folder put back is not asked about")
	}
	if app.BlockedServer(fs) == "" {
		t.Error("the policy does not block the repaired server: the test cannot tell")
	}

	// Only what was taken off is repaired.
	_, err = store.Update(func(s *app.State) error {
		_, err := s.PutServer(fs, app.PutOptions{Replace: true, Repair: true, KeepDecisions: true, Home: w.Home})
		return err
	})
	if err == nil {
		t.Error("a repair of a server never taken off was stored")
	}
}
