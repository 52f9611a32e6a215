package app

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

var needAt = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

// needState is two confined servers, k8s allowed the root project, and
// a home folder holding ~/.kube.
func needState(t *testing.T) (st *State, home, project, kube string) {
	t.Helper()
	home = t.TempDir()
	project, kube = filepath.Join(home, "project"), filepath.Join(home, ".kube")
	os.Mkdir(project, 0o755)
	os.Mkdir(kube, 0o700)
	st = &State{}
	for _, name := range []string{"k8s", "other"} {
		if err := st.AddServer(Server{Name: name, Type: TransportStdio, Command: name, Confine: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.AddRoot(Root{Path: project, Name: "project", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := st.Decide(Decision{Server: "k8s", Root: project, Verdict: Allow}); err != nil {
		t.Fatal(err)
	}
	return st, home, project, kube
}

func snapOf(st *State, roots ...string) *Snapshot {
	h := map[string]Health{}
	for _, r := range roots {
		h[r] = Health{Status: HealthOK}
	}
	return &Snapshot{State: st.Clone(), Health: h}
}

// A folder a confined server reached for, allowed, is what it needs to
// run: in its ruleset (ReachPaths), not a root, not in what it sees, not a
// question for anyone else; a reach inside it asks nothing; revoked, it
// goes from the ruleset.
func TestAllowedReachIsTheServersOwn(t *testing.T) {
	st, home, project, kube := needState(t)
	if _, err := st.AskReach("k8s", kube, ReachCall{ID: "c1", Op: OpRead, Path: kube + "/config"}, needAt, false); err != nil {
		t.Fatal(err)
	}
	place := NeedPlace{Home: home, StateDir: filepath.Join(home, ".config", "rootkeeper")}
	asRoot, err := st.AllowAsked("k8s", kube, Always, ByCommandLine, needAt, place)
	if err != nil || asRoot {
		t.Fatalf("AllowAsked: root %v, %v", asRoot, err)
	}
	if n, ok := st.Need("k8s", kube); !ok || n != (Need{Server: "k8s", Path: kube, Access: NeedReadWrite, Scope: Always, At: needAt, By: ByCommandLine}) {
		t.Errorf("need %+v %v", n, ok)
	}
	if _, ok := st.Root(kube); ok {
		t.Error("~/.kube became a root")
	}
	if _, ok := st.Request("k8s", kube); ok {
		t.Error("the request is still open")
	}
	snap := snapOf(st, project)
	if got := ReachPaths(snap, "k8s", VisiblePaths(snap, "k8s")); !slices.Equal(got, []string{kube, project}) {
		t.Errorf("k8s's ruleset %q", got)
	}
	if got := VisiblePaths(snap, "k8s"); !slices.Equal(got, []string{project}) {
		t.Errorf("k8s sees %q", got)
	}
	if got := ReachPaths(snap, "other", VisiblePaths(snap, "other")); len(got) != 0 || len(Pending(snap, "other")) != 1 {
		t.Errorf("other's ruleset %q, pending %+v", got, Pending(snap, "other"))
	}
	if changed, _ := st.AddRequest("k8s", kube+"/cache", FromReach, needAt); changed {
		t.Error("a reach inside a folder it needs is asked about")
	}
	if changed, _ := st.AddRequest("other", kube, FromReach, needAt); !changed {
		t.Error("another server's reach of the same folder is not asked about")
	}
	before := snapOf(st, project)
	if !st.RevokeNeed("k8s", kube) || st.RevokeNeed("k8s", kube) {
		t.Error("RevokeNeed reported wrongly")
	}
	if got := NeedsChanged(before, snapOf(st, project)); !slices.Equal(got, []string{"k8s"}) {
		t.Errorf("NeedsChanged %q", got)
	}
}

// A reach of a folder that is a root is decided on that root, as any
// request is; a deny is a remembered refusal as before; nothing that was
// not asked can be allowed this way.
func TestAllowedReachOfARoot(t *testing.T) {
	st, home, project, kube := needState(t)
	if _, err := st.AskReach("other", project, ReachCall{ID: "c1", Op: OpRead, Path: project + "/a"}, needAt, false); err != nil {
		t.Fatal(err)
	}
	asRoot, err := st.AllowAsked("other", project, UntilQuit, ByDialog, needAt, NeedPlace{Home: home})
	if err != nil || !asRoot || len(st.Needs) != 0 {
		t.Fatalf("root %v, %v, needs %+v", asRoot, err, st.Needs)
	}
	if d, ok := st.Decision("other", project); !ok || d.Verdict != Allow || d.Scope != UntilQuit {
		t.Errorf("decision %+v %v", d, ok)
	}
	if _, err := st.AllowAsked("k8s", kube, Always, ByDialog, needAt, NeedPlace{Home: home}); !isInputError(err) {
		t.Errorf("a folder nobody asked for: %v", err)
	}
	st.AskReach("k8s", kube, ReachCall{ID: "c2", Op: OpRead, Path: kube + "/config"}, needAt, false)
	r, _ := st.Request("k8s", kube)
	if err := st.AnswerRequest(r, false, Always, ByDialog, needAt, NeedPlace{Home: home}); err != nil {
		t.Fatal(err)
	}
	// Refused, it is that server's alone: no root, no decision.
	if _, ok := st.Decision("k8s", kube); ok || !st.Refused("k8s", kube) || len(st.Needs) != 0 {
		t.Errorf("deny: refusals %+v, needs %+v", st.Refusals, st.Needs)
	}
	if _, isRoot := st.Root(kube); isRoot {
		t.Error("a refused folder became a root")
	}
}

// The folder a confined start failed for is offered first and, allowed,
// is the server's alone; a settings folder of its own is made; the
// failure goes.
func TestAllowedFailureFolder(t *testing.T) {
	st, home, _, kube := needState(t)
	st.RecordConfineFailure(ConfineFailure{Server: "k8s", Tried: kube + "/config", Op: OpRead, Folder: kube})
	if asRoot, err := st.AllowAsked("k8s", kube, Always, ByWindow, needAt, NeedPlace{Home: home}); err != nil || asRoot {
		t.Fatalf("root %v, %v", asRoot, err)
	}
	if _, failed := st.ConfineFailureOf("k8s"); failed {
		t.Error("the failure is still recorded")
	}
	own := filepath.Join(home, ".srv-settings")
	st.RecordConfineFailure(ConfineFailure{Server: "other", Tried: own, Op: OpMkdir, Folder: own, Own: true})
	if _, err := st.AllowAsked("other", own, Always, ByWindow, needAt, NeedPlace{Home: home}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(own); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("its own folder: %v %v", fi, err)
	}
	if _, ok := st.Need("other", own); !ok {
		t.Error("its own folder is not its need")
	}
}

// A need is never the home folder, a folder above it, nor inside the
// state folder: refused as bad input, nothing recorded.
func TestNeedRefusesThePersonsWholeFolders(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(home, ".config", "rootkeeper")
	os.MkdirAll(filepath.Join(state, "data"), 0o700)
	place := NeedPlace{Home: home, StateDir: state}
	for _, p := range []string{home, "/", filepath.Dir(home), state, filepath.Join(state, "data")} {
		if err := CheckNeed(p, place); !isInputError(err) {
			t.Errorf("CheckNeed(%s) = %v", p, err)
		}
		st := &State{Servers: []Server{{Name: "s", Type: TransportStdio, Command: "s", Confine: true}}}
		st.RecordConfineFailure(ConfineFailure{Server: "s", Tried: p + "/x", Folder: p})
		if _, err := st.AllowAsked("s", p, Always, ByCommandLine, needAt, place); !isInputError(err) || len(st.Needs) != 0 {
			t.Errorf("AllowAsked(%s) = %v, needs %+v", p, err, st.Needs)
		}
	}
	for _, p := range []string{filepath.Join(home, ".kube"), filepath.Join(home, ".config")} {
		if err := CheckNeed(p, place); err != nil {
			t.Errorf("CheckNeed(%s) = %v", p, err)
		}
	}
}

// Needs go with the program they were given to (a server that now runs
// something else loses them, one redefined as the same program keeps
// them), with the server, with the app's quit when scoped so; a paused
// confined server that needs folders is held, as one with slots is.
func TestNeedsLifetime(t *testing.T) {
	st, home, _, kube := needState(t)
	add := func(scope Scope) {
		t.Helper()
		st.RecordConfineFailure(ConfineFailure{Server: "k8s", Tried: kube + "/config", Folder: kube})
		if _, err := st.AllowAsked("k8s", kube, scope, ByCommandLine, needAt, NeedPlace{Home: home}); err != nil {
			t.Fatal(err)
		}
	}
	add(UntilQuit)
	if snap := WithoutUntilQuit(snapOf(st)); len(NeedPaths(snap, "k8s")) != 0 {
		t.Error("an until-quit need holds with no app")
	}
	if st.DropUntilQuit(); len(st.Needs) != 0 {
		t.Errorf("after quit: %+v", st.Needs)
	}
	add(Always)
	if _, err := st.PutServer(Server{Name: "k8s", Type: TransportStdio, Command: "k8s"}, PutOptions{Replace: true}); err != nil || len(st.Needs) != 1 {
		t.Fatalf("the same program: %v, %+v", err, st.Needs)
	}
	st.SetPaused(true)
	h := HoldOf(snapOf(st), "k8s")
	if h == nil || !slices.Equal(h.Needs, []string{kube}) || h.Text(home) != "sharing is paused and it needs ~/.kube to run (rootkeeper resume)" {
		t.Errorf("paused: %+v", h)
	}
	st.SetPaused(false)
	if h := HoldOf(snapOf(st), "k8s"); h != nil {
		t.Errorf("resumed: %+v", h)
	}
	if _, err := st.PutServer(Server{Name: "k8s", Type: TransportStdio, Command: "kubectl-mcp"}, PutOptions{Replace: true}); err != nil || len(st.Needs) != 0 {
		t.Fatalf("another program: %v, %+v", err, st.Needs)
	}
	add(Always)
	if err := st.RemoveServer("k8s"); err != nil || len(st.Needs) != 0 {
		t.Errorf("removed: %v, %+v", err, st.Needs)
	}
}

// TestDenyAskedMakesNoRoot: refusing a folder a confined server reached
// for is that server's alone — no root appears for every other server to
// be asked about — and it is never asked again; revoking the refusal lets
// the next attempt ask, and allowing it afterwards makes it a need.
func TestDenyAskedMakesNoRoot(t *testing.T) {
	var s State
	for _, name := range []string{"kube", "other"} {
		if err := s.AddServer(Server{Name: name, Type: TransportStdio, Command: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	if _, err := s.AskReach("kube", "/home/me/.kube", ReachCall{ID: "1", Op: OpRead, Path: "/home/me/.kube/config"}, now, false); err != nil {
		t.Fatal(err)
	}
	req, _ := s.Request("kube", "/home/me/.kube")
	if err := s.AnswerRequest(req, false, Always, ByDialog, now, NeedPlace{Home: "/home/me"}); err != nil {
		t.Fatal(err)
	}
	if _, isRoot := s.Root("/home/me/.kube"); isRoot {
		t.Error("a refused reach folder became a root")
	}
	if !s.Refused("kube", "/home/me/.kube/config") || s.Refused("other", "/home/me/.kube") {
		t.Errorf("refusals %+v", s.Refusals)
	}
	if _, open := s.Request("kube", "/home/me/.kube"); open {
		t.Error("the request stayed")
	}
	if !s.Unrefuse("kube", "/home/me/.kube") || s.Refused("kube", "/home/me/.kube") {
		t.Error("revoking the refusal")
	}
	s.AskReach("kube", "/home/me/.kube", ReachCall{ID: "2", Op: OpRead, Path: "/home/me/.kube/config"}, now, false)
	if err := s.DenyAsked("kube", "/home/me/.kube", ByCommandLine, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AllowAsked("kube", "/home/me/.kube", Always, ByCommandLine, now, NeedPlace{Home: "/home/me"}); err != nil {
		t.Fatalf("allowing a refused folder: %v", err)
	}
	if _, ok := s.Need("kube", "/home/me/.kube"); !ok || s.Refused("kube", "/home/me/.kube") {
		t.Errorf("needs %+v refusals %+v", s.Needs, s.Refusals)
	}
}
