package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/mcp/confine"
)

// holdUpdates holds core's updates (the background writes of requests
// too) until the returned release is called.
func holdUpdates(t *testing.T, core *app.Core) (release func()) {
	t.Helper()
	holding, let := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- core.Update(func(*app.State) error { close(holding); <-let; return nil })
	}()
	<-holding
	return func() {
		close(let)
		if err := <-held; err != nil {
			t.Fatal(err)
		}
	}
}

// attemptsAudited are, in time order, what server's entries in dir's
// audit log that came via via and tried one of tried say became of each
// attempt: "DECIDED request=BOOL".
func attemptsAudited(t *testing.T, dir, server, via string, tried ...string) []string {
	t.Helper()
	entries, err := audit.Read(dir, server)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Via == via && slices.Contains(tried, e.Tried) {
			out = append(out, fmt.Sprintf("%s request=%v", e.Decided, e.Request))
		}
	}
	return out
}

// raisedOnce is what attemptsAudited says of two attempts with nobody to
// ask, the second made while the first's request was being written: the
// first raised the request, the second was refused as on a request asked
// before.
var raisedOnce = []string{audit.ReachUnasked + " request=true", audit.ReachRefused + " request=false"}

// TestReachRaisesOneRequestWhileItIsWritten: with nobody to ask, a read
// past the folders raises the request for its folder, written in the
// background; a second read in that folder before the write is done (the
// state file held by another update) is refused as on a request asked
// before: audited refused, not a second new request, and the one request
// kept names the first read.
func TestReachRaisesOneRequestWhileItIsWritten(t *testing.T) {
	e := newEnv(t)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: "nosy", Confine: true})
	})
	secret := mkRoot(t, "secret")
	a, b := filepath.Join(secret, "a.txt"), filepath.Join(secret, "b.txt")
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w := NewReachWatch(e.core, audit.NewLog(e.dir), nil, "nosy", e.dir)
	w.CanAsk = func() bool { return false }

	release := holdUpdates(t, e.core)
	for _, f := range []string{a, b} {
		if got := w.Reach(context.Background(), confine.Attempt{Op: app.OpRead, Path: f, CanHand: true}); got != "" {
			t.Fatalf("read %s with nobody to ask was handed %q", f, got)
		}
	}
	release()
	w.Pending.Wait()

	reqs := e.core.Snapshot().State.RequestsFor("nosy")
	if len(reqs) != 1 || reqs[0].Path != secret || reqs[0].Tried != a || !reqs[0].Unasked {
		t.Errorf("requests kept: %+v; want one for %s, tried %s", reqs, secret, a)
	}
	if got := attemptsAudited(t, e.dir, "nosy", audit.ViaReach, a, b); !slices.Equal(got, raisedOnce) {
		t.Errorf("the reads of %s and %s audited %q, want %q", a, b, got, raisedOnce)
	}
}

// TestNetworkRaisesOneRequestWhileItIsWritten: the same for a network
// destination: a server whose network is only some destinations looks up
// a name not among them twice with nobody to ask, the second time before
// the first's request is written; one request is raised, and the second
// lookup is refused.
func TestNetworkRaisesOneRequestWhileItIsWritten(t *testing.T) {
	e := newEnv(t)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "nosy", Type: app.TransportStdio, Command: "nosy", Confine: true,
			Network: &app.NetworkSetting{Mode: app.NetworkOnly, Allow: []string{"api.example.com"}}})
	})
	w := NewNetWatch(e.core, audit.NewLog(e.dir), nil, "nosy", "")

	release := holdUpdates(t, e.core)
	for range 2 {
		if w.Lookup("elsewhere.example.org") {
			t.Fatal("a name the setting does not allow was looked up")
		}
	}
	release()
	w.Pending.Wait()

	reqs := e.core.Snapshot().State.RequestsFor("nosy")
	if len(reqs) != 1 || !reqs[0].Unasked {
		t.Errorf("requests kept: %+v; want one, unasked", reqs)
	}
	var dest string
	if len(reqs) == 1 {
		dest = reqs[0].Path
	}
	if got := attemptsAudited(t, e.dir, "nosy", audit.ViaNetwork, dest); !slices.Equal(got, raisedOnce) {
		t.Errorf("the two lookups of %q audited %q, want %q", dest, got, raisedOnce)
	}
}
