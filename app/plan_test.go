package app

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// planState is n roots (project-1 … project-n, enabled) and servers s0 … s(m-1).
func planState(t testing.TB, n, m int) *State {
	t.Helper()
	st := &State{}
	for i := 1; i <= n; i++ {
		if err := st.AddRoot(Root{Path: fmt.Sprintf("/home/p/project-%d", i), Enabled: true, Source: SourceGit}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range m {
		if err := st.AddServer(Server{Name: fmt.Sprintf("s%d", i), Type: TransportStdio, Command: "srv"}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// DecideAll means what Decide one by one means.
func TestDecideAllIsDecideOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	for round := range 200 {
		base := planState(t, 8, 3)
		base.Requests = []Request{{Server: "s1", Path: "/home/p/project-3"}, {Server: "s2", Path: "/elsewhere"}}
		for range rng.IntN(10) {
			_ = base.Decide(randomDecision(rng))
		}
		var ds []Decision
		for range 1 + rng.IntN(12) {
			ds = append(ds, randomDecision(rng))
		}
		one, all := base.Clone(), base.Clone()
		for _, d := range ds {
			if err := one.Decide(d); err != nil {
				t.Fatal(err)
			}
		}
		if err := all.DecideAll(ds); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(one.Decisions, all.Decisions) || !reflect.DeepEqual(one.Requests, all.Requests) {
			t.Fatalf("round %d: DecideAll\n%+v\n%+v\nDecide one by one\n%+v\n%+v", round, all.Decisions, all.Requests, one.Decisions, one.Requests)
		}
	}
}

func randomDecision(rng *rand.Rand) Decision {
	at := time.Date(2026, 1, 1, 0, 0, rng.IntN(1000), 0, time.UTC)
	d := Decision{Server: fmt.Sprintf("s%d", rng.IntN(3)), Root: fmt.Sprintf("/home/p/project-%d", 1+rng.IntN(8)),
		Verdict: Allow, Scope: Always, At: at, By: ByWindow}
	if rng.IntN(2) == 0 {
		d.Verdict = Deny
	}
	if rng.IntN(3) == 0 {
		d.Scope = UntilQuit
	}
	return d
}

func TestDecideAllAndApplyChangeNothingOnABadValue(t *testing.T) {
	st := planState(t, 3, 2)
	if err := st.Decide(Decision{Server: "s0", Root: "/home/p/project-1", Verdict: Allow}); err != nil {
		t.Fatal(err)
	}
	before := st.Clone()
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"unknown server", st.DecideAll([]Decision{{Server: "s0", Root: "/home/p/project-2", Verdict: Allow}, {Server: "ghost", Root: "/home/p/project-2", Verdict: Allow}}), `no server "ghost"`},
		{"unknown root", st.DecideAll([]Decision{{Server: "s0", Root: "/nowhere", Verdict: Deny}}), `no root "/nowhere"`},
		{"bad verdict", st.DecideAll([]Decision{{Server: "s0", Root: "/home/p/project-2", Verdict: "maybe"}}), `invalid verdict "maybe" (want allow or deny)`},
		{"bad access", st.Apply([]Change{{Server: "s0", Root: "/home/p/project-1", Access: AccessNotAsked}, {Server: "s0", Root: "/home/p/project-2", Access: "sometimes"}}, ByWindow), `invalid access "sometimes" for s0 on /home/p/project-2`},
		{"revoke with a bad decision", st.Apply([]Change{{Server: "s0", Root: "/home/p/project-1", Access: AccessNotAsked}, {Server: "ghost", Root: "/home/p/project-2", Access: AccessDenied}}, ByWindow), `no server "ghost"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil || tc.err.Error() != tc.want {
				t.Errorf("error %v, want %q", tc.err, tc.want)
			}
			if ie, ok := tc.err.(*InputError); !ok || ie.ExitCode() != 2 {
				t.Errorf("%T is not an input error", tc.err)
			}
		})
	}
	if !reflect.DeepEqual(before, *st) {
		t.Errorf("a refused change changed the state:\n%+v\nwas\n%+v", st.Decisions, before.Decisions)
	}
}

func TestApplyMovesEverySwitch(t *testing.T) {
	st := planState(t, 4, 1)
	must(t, st.Decide(Decision{Server: "s0", Root: "/home/p/project-4", Verdict: Allow, By: ByCommandLine}))
	err := st.Apply([]Change{
		{Server: "s0", Root: "/home/p/project-1", Access: AccessAllowed},
		{Server: "s0", Root: "/home/p/project-2", Access: AccessUntilQuit},
		{Server: "s0", Root: "/home/p/project-3", Access: AccessDenied},
		{Server: "s0", Root: "/home/p/project-4", Access: AccessNotAsked},
	}, ByWindow)
	must(t, err)
	var got []string
	for _, d := range st.Decisions {
		got = append(got, fmt.Sprintf("%s %s %s %s", d.Root, d.Verdict, d.Scope, d.By))
	}
	want := []string{
		"/home/p/project-1 allow always window",
		"/home/p/project-2 allow until-quit window",
		"/home/p/project-3 deny always window",
	}
	if !slices.Equal(got, want) {
		t.Errorf("decisions %q, want %q", got, want)
	}
	for _, c := range []struct {
		path string
		want Access
	}{{"/home/p/project-1", AccessAllowed}, {"/home/p/project-2", AccessUntilQuit}, {"/home/p/project-3", AccessDenied}, {"/home/p/project-4", AccessNotAsked}} {
		t.Run(string(c.want), func(t *testing.T) {
			d, ok := st.Decision("s0", c.path)
			if a := AccessOf(d, ok); a != c.want {
				t.Errorf("%s reads %s, want %s", c.path, a, c.want)
			}
		})
	}
}

func TestShareAddsEnablesAndDecidesInOneChange(t *testing.T) {
	st := planState(t, 0, 3)
	root := Root{Path: "/home/p/new", Source: SourcePicked}
	must(t, st.Share(root, true, []string{"s1"}, []string{"s0", "s2"}, UntilQuit, ByDialog))
	r, ok := st.Root("/home/p/new")
	if !ok || !r.Enabled || r.Name != "new" {
		t.Fatalf("root after share: %+v %t", r, ok)
	}
	snap := &Snapshot{State: *st, Health: map[string]Health{r.Path: {Status: HealthOK}}}
	if got := SharedWith(snap, r.Path); !slices.Equal(got, []string{"s1"}) {
		t.Errorf("shared with %q, want s1", got)
	}
	if len(st.Decisions) != 3 || st.Decisions[0].Scope != UntilQuit || st.Decisions[0].By != ByDialog {
		t.Errorf("decisions %+v", st.Decisions)
	}
	// Sharing it again (it exists now) asks nothing new of the state.
	must(t, st.Share(root, true, nil, []string{"s1"}, Always, ByDialog))
	if len(st.Roots) != 1 || AccessOf(st.Decision("s1", r.Path)) != AccessDenied {
		t.Errorf("second share: roots %d, s1 %s", len(st.Roots), AccessOf(st.Decision("s1", r.Path)))
	}
}

func TestPlanTurnOn(t *testing.T) {
	ok := Health{Status: HealthOK}
	snapOf := func(decide ...Decision) *Snapshot {
		st := planState(t, 1, 2)
		must(t, st.SetEnabled("/home/p/project-1", false))
		off := Server{Name: "quiet", Type: TransportStdio, Command: "srv", RootsMode: RootsOff}
		must(t, st.AddServer(off))
		must(t, st.DecideAll(decide))
		return &Snapshot{State: *st, Health: map[string]Health{"/home/p/project-1": ok}}
	}
	p := "/home/p/project-1"
	d := func(server string, v Verdict) Decision { return Decision{Server: server, Root: p, Verdict: v} }
	for _, tc := range []struct {
		name   string
		snap   *Snapshot
		ask    []string
		enable bool
	}{
		{"nobody asked: ask the taking servers", snapOf(), []string{"s0", "s1"}, false},
		{"one undecided: ask it", snapOf(d("s0", Allow)), []string{"s1"}, false},
		{"all decided, one allowed: turn on", snapOf(d("s0", Allow), d("s1", Deny)), nil, true},
		{"all denied: ask everyone again", snapOf(d("s0", Deny), d("s1", Deny)), []string{"s0", "s1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, found := PlanTurnOn(tc.snap, p)
			if !found || !slices.Equal(plan.Ask, tc.ask) || plan.Enable != tc.enable || plan.Root.Path != p {
				t.Errorf("%+v (found %t), want ask %q enable %t", plan, found, tc.ask, tc.enable)
			}
		})
	}
	if _, found := PlanTurnOn(snapOf(), "/nowhere"); found {
		t.Error("a plan for an unknown root")
	}
}

// The grid answers what Visible, Pending and AccessOf answer, over random
// histories of every input of the one rule.
func TestGridAgreesWithTheOneRule(t *testing.T) {
	histories := 2000
	if testing.Short() {
		histories = 200
	}
	rng := rand.New(rand.NewPCG(12, 12))
	for h := range histories {
		var st State
		health := map[string]Health{}
		for step := range propSteps {
			applyToState(&st, health, randomEvent(rng))
			snap := &Snapshot{State: st.Clone(), Health: cloneHealth(health), Servers: map[string]ServerStatus{}}
			for _, srv := range st.Servers {
				if rng.IntN(2) == 0 {
					snap.Servers[srv.Name] = ServerStatus{State: ServerConnected}
				}
			}
			g := NewGrid(snap)
			for _, r := range st.Roots {
				if got, want := g.SeenBy(r.Path), SharedWith(snap, r.Path); !slices.Equal(sorted(got), want) {
					t.Fatalf("history %d step %d: grid says %s is seen by %q, SharedWith %q", h, step, r.Path, got, want)
				}
				if got, want := g.Undecided(r.Path), Undecided(snap, r.Path); !slices.Equal(got, want) {
					t.Fatalf("history %d step %d: undecided %q, want %q", h, step, got, want)
				}
				for _, srv := range st.Servers {
					if got, want := g.Access(srv.Name, r.Path), AccessOf(st.Decision(srv.Name, r.Path)); got != want {
						t.Fatalf("history %d step %d: access %s/%s %s, want %s", h, step, srv.Name, r.Path, got, want)
					}
				}
			}
			var want []string
			for _, srv := range st.Servers {
				if snap.Servers[srv.Name].State != ServerConnected {
					continue
				}
				for _, r := range Pending(snap, srv.Name) {
					want = append(want, srv.Name+" "+r.Path)
				}
			}
			var got []string
			for _, q := range g.Questions() {
				got = append(got, q.Server+" "+q.Root.Path)
			}
			slices.Sort(want)
			if !slices.Equal(sorted(got), want) {
				t.Fatalf("history %d step %d: questions %q, want %q", h, step, got, want)
			}
		}
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// Questions wait for servers still starting, at most QuestionSettle from
// when each began; failed or stopped servers hold nothing.
func TestSettlingWaitsForStartingServers(t *testing.T) {
	st := planState(t, 3, 3)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	grid := func(statuses map[string]ServerStatus) *Grid {
		return NewGrid(&Snapshot{State: *st, Servers: statuses})
	}
	if w := grid(map[string]ServerStatus{"s1": {State: ServerConnected}}).Settling(now); w != 0 {
		t.Errorf("nothing starting: wait %v", w)
	}
	g := grid(map[string]ServerStatus{
		"s1": {State: ServerConnected},
		"s2": {State: ServerStarting, Since: now.Add(-500 * time.Millisecond)},
		"s3": {State: ServerStarting, Since: now.Add(-1500 * time.Millisecond)},
	})
	if w := g.Settling(now); w != QuestionSettle-500*time.Millisecond {
		t.Errorf("wait %v, want until the later starter's settle time", w)
	}
	g = grid(map[string]ServerStatus{
		"s1": {State: ServerConnected},
		"s2": {State: ServerStarting, Since: now.Add(-QuestionSettle - time.Second)},
		"s3": {State: ServerFailed, Since: now},
	})
	if w := g.Settling(now); w != 0 {
		t.Errorf("a long-starting or failed server holds the questions: wait %v", w)
	}
}

func TestQuestionsAreNaturallySortedAndAnswered(t *testing.T) {
	st := planState(t, 12, 2)
	snap := &Snapshot{State: *st, Servers: map[string]ServerStatus{"s1": {State: ServerConnected}}}
	g := NewGrid(snap)
	qs := g.Questions()
	if len(qs) != 12 || qs[0].Server != "s1" || qs[1].Root.Path != "/home/p/project-2" || qs[11].Root.Path != "/home/p/project-12" {
		t.Fatalf("questions %+v", qs)
	}
	ds := Answers(qs, map[int]bool{0: true, 9: true}, UntilQuit, ByWindow)
	must(t, st.DecideAll(ds))
	snap = &Snapshot{State: *st, Health: map[string]Health{}}
	for _, r := range st.Roots {
		snap.Health[r.Path] = Health{Status: HealthOK}
	}
	if got := VisiblePaths(snap, "s1"); !slices.Equal(got, []string{"/home/p/project-1", "/home/p/project-10"}) {
		t.Errorf("s1 sees %q", got)
	}
	if p := Pending(snap, "s1"); len(p) != 0 {
		t.Errorf("still pending after the answer: %d", len(p))
	}
}

func TestBulkActionsOfTheServerView(t *testing.T) {
	st := planState(t, 3, 1)
	must(t, st.AddRoot(Root{Path: "/work/x", Enabled: true}))
	must(t, st.Decide(Decision{Server: "s0", Root: "/home/p/project-2", Verdict: Deny}))
	g := NewGrid(&Snapshot{State: *st})
	under := g.AllowUnder("s0", "/home/p")
	if len(under) != 3 {
		t.Fatalf("allow under /home/p: %+v", under)
	}
	rest := g.DenyRest("s0")
	var paths []string
	for _, c := range rest {
		paths = append(paths, c.Root)
	}
	if !slices.Equal(paths, []string{"/home/p/project-1", "/home/p/project-3", "/work/x"}) {
		t.Errorf("deny the rest: %q", paths)
	}
	must(t, st.Apply(g.AllowUnder("s0", "/work"), ByWindow))
	must(t, st.Apply(NewGrid(&Snapshot{State: *st}).DenyRest("s0"), ByWindow))
	g = NewGrid(&Snapshot{State: *st})
	for path, want := range map[string]Access{"/work/x": AccessAllowed, "/home/p/project-1": AccessDenied, "/home/p/project-2": AccessDenied} {
		if got := g.Access("s0", path); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
}

// Answering a thousand folders for twenty servers at once: DecideAll
// against Decide one by one (the anchor).
func BenchmarkDecideAll(b *testing.B) {
	st := planState(b, 1000, 20)
	var ds []Decision
	for _, srv := range st.Servers {
		for _, r := range st.Roots[:50] {
			ds = append(ds, Decision{Server: srv.Name, Root: r.Path, Verdict: Allow})
		}
	}
	b.Run("DecideAll", func(b *testing.B) {
		for b.Loop() {
			c := st.Clone()
			if err := c.DecideAll(ds); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Decide", func(b *testing.B) {
		for b.Loop() {
			c := st.Clone()
			for _, d := range ds {
				if err := c.Decide(d); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// NewGrid at 1,000 roots × 20 servers with 50 grants each, the index every
// window view is drawn from.
func BenchmarkNewGrid(b *testing.B) {
	st := planState(b, 1000, 20)
	health := map[string]Health{}
	for _, r := range st.Roots {
		health[r.Path] = Health{Status: HealthOK}
	}
	var ds []Decision
	for i, srv := range st.Servers {
		for j := range 50 {
			ds = append(ds, Decision{Server: srv.Name, Root: st.Roots[(i*50+j)%1000].Path, Verdict: Allow})
		}
	}
	if err := st.DecideAll(ds); err != nil {
		b.Fatal(err)
	}
	snap := &Snapshot{State: *st, Health: health}
	for b.Loop() {
		NewGrid(snap)
	}
}

func TestRecentRoots(t *testing.T) {
	st := planState(t, 20, 1)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range st.Roots {
		st.Roots[i].Added = base
	}
	// project-3 was added last; project-17 and project-5 decided later.
	must(t, st.UpdateRoot("/home/p/project-3", func(r *Root) { r.Added = base.Add(time.Hour) }))
	must(t, st.Decide(Decision{Server: "s0", Root: "/home/p/project-17", Verdict: Allow, At: base.Add(2 * time.Hour)}))
	must(t, st.Decide(Decision{Server: "s0", Root: "/home/p/project-5", Verdict: Deny, At: base.Add(3 * time.Hour)}))
	var got []string
	for _, r := range RecentRoots(&Snapshot{State: *st}, 4) {
		got = append(got, r.Path)
	}
	// The three recent ones, then the naturally first of the rest; shown
	// in natural order.
	want := []string{"/home/p/project-1", "/home/p/project-3", "/home/p/project-5", "/home/p/project-17"}
	if !slices.Equal(got, want) {
		t.Errorf("recent %q, want %q", got, want)
	}
	if n := len(RecentRoots(&Snapshot{State: *st}, 100)); n != 20 {
		t.Errorf("%d recent of 20", n)
	}
}
