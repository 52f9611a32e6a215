package app

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The property test drives random histories of every input of the one rule
// through the real State operations, and after every step compares Visible
// and Changed with an oracle: a plain model, written without State, Snapshot
// or Visible, of what the history means.

const (
	propServers   = 6
	propRoots     = 24
	propHistories = 10_000
	propSteps     = 40
)

type opKind int

const (
	opAddRoot opKind = iota
	opRemoveRoot
	opEnable
	opDisable
	opGrant
	opDeny
	opRevoke
	opPause
	opResume
	opHealth
	opAddServer
	opRemoveServer
	opSetMode
	opSetProgram // replace the server with e.enable ? "srv" : "srv2" as its command
	numOps
)

type event struct {
	op     opKind
	server int
	root   int
	health HealthStatus
	mode   RootsMode
	enable bool
}

func (e event) String() string {
	return fmt.Sprintf("op%d(s%d,r%d,%s,%s,%v)", e.op, e.server, e.root, e.health, e.mode, e.enable)
}

var (
	propHealths = []HealthStatus{HealthOK, HealthOK, HealthMissing, HealthUnreadable, HealthNotDir, HealthUnmounted}
	propModes   = []RootsMode{RootsProtocol, RootsProtocol, RootsArgs, RootsEnv, RootsOff}
)

func rootPathN(i int) string   { return fmt.Sprintf("/home/p/proj %02d", i) }
func serverNameN(i int) string { return fmt.Sprintf("srv-%d", i) }

func randomEvent(rng *rand.Rand) event {
	return event{
		op:     opKind(rng.IntN(int(numOps))),
		server: rng.IntN(propServers),
		root:   rng.IntN(propRoots),
		health: propHealths[rng.IntN(len(propHealths))],
		mode:   propModes[rng.IntN(len(propModes))],
		enable: rng.IntN(2) == 0,
	}
}

// oracle is the independent model: plain maps updated by the meaning of
// each event, with the same preconditions a person meets (a decision needs
// both the server and the root to exist).
type oracle struct {
	rootExists   [propRoots]bool
	enabled      [propRoots]bool
	health       [propRoots]HealthStatus
	serverExists [propServers]bool
	mode         [propServers]RootsMode
	program      [propServers]string
	decision     [propServers][propRoots]Verdict // "" = undecided
	paused       bool
}

func (o *oracle) apply(e event) {
	switch e.op {
	case opAddRoot:
		if !o.rootExists[e.root] {
			o.rootExists[e.root] = true
			o.enabled[e.root] = e.enable
		}
	case opRemoveRoot:
		o.rootExists[e.root] = false
		o.enabled[e.root] = false
		for s := range o.decision {
			o.decision[s][e.root] = ""
		}
	case opEnable, opDisable:
		if o.rootExists[e.root] {
			o.enabled[e.root] = e.op == opEnable
		}
	case opGrant, opDeny:
		if o.rootExists[e.root] && o.serverExists[e.server] {
			o.decision[e.server][e.root] = map[opKind]Verdict{opGrant: Allow, opDeny: Deny}[e.op]
		}
	case opRevoke:
		o.decision[e.server][e.root] = ""
	case opPause:
		o.paused = true
	case opResume:
		o.paused = false
	case opHealth:
		o.health[e.root] = e.health
	case opAddServer:
		if !o.serverExists[e.server] {
			o.serverExists[e.server] = true
			o.mode[e.server] = e.mode
			o.program[e.server] = "srv"
		}
	case opRemoveServer:
		o.serverExists[e.server] = false
		for r := range o.decision[e.server] {
			o.decision[e.server][r] = ""
		}
	case opSetMode:
		if o.serverExists[e.server] {
			o.mode[e.server] = e.mode
		}
	case opSetProgram:
		// Another program under the same name starts with no decisions.
		if p := programOf(e); o.serverExists[e.server] && p != o.program[e.server] {
			o.program[e.server] = p
			for r := range o.decision[e.server] {
				o.decision[e.server][r] = ""
			}
		}
	}
}

func programOf(e event) string {
	if e.enable {
		return "srv"
	}
	return "srv2"
}

func (o *oracle) visible(s int) []string {
	if o.paused || !o.serverExists[s] || o.mode[s] == RootsOff {
		return nil
	}
	var out []string
	for r := 0; r < propRoots; r++ {
		if o.rootExists[r] && o.enabled[r] && o.health[r] == HealthOK && o.decision[s][r] == Allow {
			out = append(out, rootPathN(r))
		}
	}
	return out // rootPathN is zero-padded, so index order is path order
}

// applyToState performs e with the real operations, ignoring the errors a
// person would get for impossible requests (the oracle models those as
// no-ops).
func applyToState(st *State, health map[string]Health, e event) {
	path, name := rootPathN(e.root), serverNameN(e.server)
	switch e.op {
	case opAddRoot:
		_ = st.AddRoot(Root{Path: path, Enabled: e.enable, Source: SourcePicked})
	case opRemoveRoot:
		_ = st.RemoveRoot(path)
	case opEnable, opDisable:
		_ = st.SetEnabled(path, e.op == opEnable)
	case opGrant:
		_ = st.Decide(Decision{Server: name, Root: path, Verdict: Allow, By: ByCommandLine})
	case opDeny:
		_ = st.Decide(Decision{Server: name, Root: path, Verdict: Deny, Scope: UntilQuit, By: ByDialog})
	case opRevoke:
		st.Revoke(name, path)
	case opPause:
		st.Paused = true
	case opResume:
		st.Paused = false
	case opHealth:
		health[path] = Health{Status: e.health}
	case opAddServer:
		_ = st.AddServer(Server{Name: name, Type: TransportStdio, Command: "srv", RootsMode: e.mode})
	case opRemoveServer:
		_ = st.RemoveServer(name)
	case opSetMode:
		if srv, ok := st.Server(name); ok {
			srv.RootsMode = e.mode
			_, _ = st.PutServer(srv, PutOptions{Replace: true, Given: SetRootsMode})
		}
	case opSetProgram:
		if srv, ok := st.Server(name); ok {
			srv.Command = programOf(e)
			_, _ = st.PutServer(srv, PutOptions{Replace: true})
		}
	}
}

func TestVisibleMatchesOracleOverRandomHistories(t *testing.T) {
	histories := propHistories
	if testing.Short() {
		histories = 500
	}
	rng := rand.New(rand.NewPCG(2026, 11))
	checks := 0
	for h := 0; h < histories; h++ {
		var st State
		var o oracle
		health := map[string]Health{}
		prev := &Snapshot{}
		var history []event
		for step := 0; step < propSteps; step++ {
			e := randomEvent(rng)
			history = append(history, e)
			o.apply(e)
			applyToState(&st, health, e)
			snap := &Snapshot{State: st.Clone(), Health: cloneHealth(health)}

			var wantChanged []string
			for s := 0; s < propServers; s++ {
				got := VisiblePaths(snap, serverNameN(s))
				want := o.visible(s)
				if !slices.Equal(got, want) {
					t.Fatalf("history %d step %d: visible(%s) = %q, oracle says %q\nhistory: %v", h, step, serverNameN(s), got, want, history)
				}
				if view := VisibleView(snap, serverNameN(s)); !slices.Equal(view, Visible(snap, serverNameN(s))) {
					t.Fatalf("history %d step %d: VisibleView(%s) = %v, Visible %v", h, step, serverNameN(s), view, Visible(snap, serverNameN(s)))
				}
				for _, p := range got {
					r := indexOfRootPath(p)
					if o.decision[s][r] != Allow {
						t.Fatalf("history %d step %d: %s sees undecided or denied %q", h, step, serverNameN(s), p)
					}
				}
				if !slices.Equal(VisiblePaths(prev, serverNameN(s)), want) {
					wantChanged = append(wantChanged, serverNameN(s))
				}
				checks++
			}
			if got := Changed(prev, snap); !slices.Equal(got, wantChanged) {
				t.Fatalf("history %d step %d: Changed = %q, want %q\nhistory: %v", h, step, got, wantChanged, history)
			}
			prev = snap
		}
	}
	t.Logf("%d histories, %d visible-set checks", histories, checks)
}

func cloneHealth(m map[string]Health) map[string]Health {
	c := make(map[string]Health, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func indexOfRootPath(p string) int {
	for i := 0; i < propRoots; i++ {
		if rootPathN(i) == p {
			return i
		}
	}
	return -1
}

// A snapshot must not share memory with the state it was cloned from:
// editing the state afterwards must not change what servers see.
func TestSnapshotIsIsolatedFromLaterEdits(t *testing.T) {
	var st State
	must(t, st.AddRoot(Root{Path: "/a", Enabled: true}))
	must(t, st.AddServer(Server{Name: "s", Type: TransportStdio, Command: "x", Args: []string{"1"}}))
	must(t, st.Decide(Decision{Server: "s", Root: "/a", Verdict: Allow}))
	snap := &Snapshot{State: st.Clone(), Health: map[string]Health{"/a": {Status: HealthOK}}}
	st.Roots[0].Enabled = false
	st.Decisions[0].Verdict = Deny
	st.Servers[0].Args[0] = "changed"
	if got := VisiblePaths(snap, "s"); !slices.Equal(got, []string{"/a"}) {
		t.Fatalf("snapshot changed with the state: visible = %q", got)
	}
	if snap.State.Servers[0].Args[0] != "1" {
		t.Fatalf("snapshot shares server args with the state")
	}
}

func TestUnknownServerAndUncheckedRootSeeNothing(t *testing.T) {
	var st State
	must(t, st.AddRoot(Root{Path: "/a", Enabled: true}))
	must(t, st.AddServer(Server{Name: "s", Type: TransportStdio, Command: "x"}))
	must(t, st.Decide(Decision{Server: "s", Root: "/a", Verdict: Allow}))
	snap := &Snapshot{State: st}
	if got := Visible(snap, "s"); len(got) != 0 {
		t.Fatalf("a root never checked is visible: %v", got)
	}
	snap.Health = map[string]Health{"/a": {Status: HealthOK}}
	if got := Visible(snap, "nobody"); len(got) != 0 {
		t.Fatalf("an unknown server sees %v", got)
	}
	if got := VisiblePaths(snap, "s"); !slices.Equal(got, []string{"/a"}) {
		t.Fatalf("visible = %q, want [/a]", got)
	}
	if got := Pending(snap, "s"); len(got) != 0 {
		t.Fatalf("a decided root is pending: %v", got)
	}
	must(t, st.AddRoot(Root{Path: "/b", Enabled: true}))
	snap = &Snapshot{State: st, Health: map[string]Health{"/a": {Status: HealthOK}, "/b": {Status: HealthOK}}}
	if got := Pending(snap, "s"); len(got) != 1 || got[0].Path != "/b" {
		t.Fatalf("pending = %v, want /b", got)
	}
	if got := SharedWith(snap, "/a"); !slices.Equal(got, []string{"s"}) {
		t.Fatalf("SharedWith(/a) = %q", got)
	}
	must(t, st.AddServer(Server{Name: "off", Type: TransportStdio, Command: "x", RootsMode: RootsOff}))
	must(t, st.AddServer(Server{Name: "t", Type: TransportStdio, Command: "x"}))
	must(t, st.Decide(Decision{Server: "t", Root: "/a", Verdict: Deny}))
	snap = &Snapshot{State: st}
	if got := Undecided(snap, "/a"); len(got) != 0 {
		t.Fatalf("Undecided(/a) = %q; s allowed, t denied, off takes no roots", got)
	}
	if got := Undecided(snap, "/b"); !slices.Equal(got, []string{"s", "t"}) {
		t.Fatalf("Undecided(/b) = %q, want [s t]", got)
	}
	if got := AllowedBy(snap, "/a"); !slices.Equal(got, []string{"s"}) {
		t.Fatalf("AllowedBy(/a) = %q, want [s]", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// WhyNotSeen says Seen exactly when Visible shows the root, over random
// histories, and a reason otherwise.
func TestWhyNotSeenAgreesWithTheOneRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for range 500 {
		st := State{}
		health := map[string]Health{}
		for range propSteps {
			applyToState(&st, health, randomEvent(rng))
		}
		snap := &Snapshot{State: st.Clone(), Health: cloneHealth(health)}
		for _, srv := range st.Servers {
			vis := VisiblePaths(snap, srv.Name)
			for _, r := range st.Roots {
				why := WhyNotSeen(snap, srv.Name, r)
				if (why == Seen) != slices.Contains(vis, r.Path) {
					t.Fatalf("%s on %s: why %q, visible %v", srv.Name, r.Path, why, vis)
				}
			}
		}
	}
}
