package confine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// observed wraps cmd to run confined and observed under p, its Network n
// (nil: none set, TCP goes anywhere) and reach told each attempt (nil:
// nobody, every attempt let go on to Landlock), starts it and its
// observer, and closes the observer when the test ends (or sooner, by
// Close).
func observed(t testing.TB, cmd *exec.Cmd, p Policy, n Network, reach Reach) *Observer {
	t.Helper()
	_, obs, err := WrapObserved(cmd, p)
	if err != nil {
		t.Fatalf("WrapObserved: %v", err)
	}
	if n != nil {
		obs.Network = n
	}
	if err := Start(cmd); err != nil {
		obs.Close()
		t.Fatal(err)
	}
	t.Cleanup(obs.Close)
	if reach == nil {
		reach = func(context.Context, Attempt) string { return "" }
	}
	if err := obs.Start(reach); err != nil {
		t.Fatal(err)
	}
	return obs
}

// recorded is reach keeping every attempt it is told, which seen gives.
func recorded(reach Reach) (r Reach, seen func() []Attempt) {
	var mu sync.Mutex
	var all []Attempt
	r = func(ctx context.Context, a Attempt) string {
		mu.Lock()
		all = append(all, a)
		mu.Unlock()
		return reach(ctx, a)
	}
	return r, func() []Attempt {
		mu.Lock()
		defer mu.Unlock()
		return append([]Attempt(nil), all...)
	}
}

// outcomes are the results nosy wrote to out, a JSON object each.
func outcomes(t testing.TB, out *bytes.Buffer) []outcome {
	t.Helper()
	var res []outcome
	dec := json.NewDecoder(out)
	for dec.More() {
		var o outcome
		if err := dec.Decode(&o); err != nil {
			t.Fatalf("nosy's results: %v", err)
		}
		res = append(res, o)
	}
	return res
}

// rootAndOutside makes two folders under a temp folder base: root (a
// server's root) and outside (past its ruleset).
func rootAndOutside(t testing.TB) (base, root, outside string) {
	t.Helper()
	base = t.TempDir()
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	os.MkdirAll(root, 0o755)
	os.MkdirAll(outside, 0o755)
	return base, root, outside
}
