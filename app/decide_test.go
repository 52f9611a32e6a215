package app

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Decisions stay in the order sorting them all after each decision gave
// (the way Decide kept them before it inserted in place): random
// decisions and revocations on states whose decisions start sorted, out
// of order, or holding a pair twice (a hand-edited file).
func TestDecideKeepsTheOrderSortingGave(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		st := State{Version: StateVersion}
		var servers, roots []string
		for i := range 6 {
			servers = append(servers, fmt.Sprintf("s%d", rng.IntN(1000)+i*1000))
			roots = append(roots, fmt.Sprintf("/r/%d", rng.IntN(1000)+i*1000))
			st.Servers = append(st.Servers, Server{Name: servers[i], Type: TransportStdio, Command: "x"})
			st.Roots = append(st.Roots, Root{Path: roots[i], Enabled: true})
		}
		pick := func() (string, string) { return servers[rng.IntN(len(servers))], roots[rng.IntN(len(roots))] }
		for range rng.IntN(8) {
			s, r := pick()
			st.Decisions = append(st.Decisions, Decision{Server: s, Root: r, Verdict: Deny, Scope: Always, By: ByCommandLine})
		}
		if round%3 == 0 {
			slices.SortFunc(st.Decisions, byPair)
		}
		want := st.Clone()
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for range 30 {
			s, r := pick()
			if rng.IntN(4) == 0 {
				st.Revoke(s, r)
				want.Revoke(s, r)
				continue
			}
			d := Decision{Server: s, Root: r, Verdict: Allow, Scope: Always, At: at, By: ByCommandLine}
			if err := st.Decide(d); err != nil {
				t.Fatal(err)
			}
			want.Revoke(s, r)
			want.Decisions = append(want.Decisions, d)
			slices.SortFunc(want.Decisions, byPair)
			if !slices.Equal(st.Decisions, want.Decisions) {
				t.Fatalf("round %d: decisions\n%+v\nsorting gives\n%+v", round, st.Decisions, want.Decisions)
			}
		}
	}
}
