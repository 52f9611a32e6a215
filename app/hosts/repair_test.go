package hosts

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"rootkeeper/app"
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
		if _, err := s.ReplaceServer(old, true); err != nil {
			return err
		}
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
