package mcp

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// hostileServer builds testdata/hostile once and returns the binary.
func hostileServer(t testing.TB) string { return apptest.Program(t, "mcp/testdata/hostile") }

func TestGateBoundsRateAndInFlight(t *testing.T) {
	g := newGate(2, 1, 3)
	var done []func()
	for i := range 3 {
		d, err := g.enter("sampling/createMessage")
		if i < 2 && err != nil {
			t.Fatalf("request %d refused: %v", i, err)
		}
		if i == 2 {
			if err == nil || !strings.Contains(err.Message, "in flight") || err.Code != CodeTooManyRequests {
				t.Fatalf("third request in flight: %v", err)
			}
			continue
		}
		done = append(done, d)
	}
	for _, d := range done {
		d()
	}
	if _, err := g.enter("x"); err == nil || !strings.Contains(err.Message, "a second") {
		t.Fatalf("a request past the burst: %v", err)
	}
}

// A storm of events is one call at once and one trailing call an interval
// later; the next storm an interval after that is the same again. In a
// synctest bubble, whose clock moves only when everything waits, the
// counts are exact.
func TestCoalescerFoldsAStorm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		const interval = 200 * time.Millisecond
		c := &coalescer{interval: interval, fn: func() { calls.Add(1) }}
		for range 10_000 {
			c.fire()
		}
		synctest.Wait()
		if n := calls.Load(); n != 1 {
			t.Fatalf("10,000 events in a burst made %d calls at once, want 1", n)
		}
		time.Sleep(interval - time.Millisecond)
		synctest.Wait()
		if n := calls.Load(); n != 1 {
			t.Fatalf("%d calls before the interval ended, want 1", n)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if n := calls.Load(); n != 2 {
			t.Fatalf("%d calls once the interval ended, want 2 (one at once, one trailing)", n)
		}
		time.Sleep(10 * interval)
		synctest.Wait()
		if n := calls.Load(); n != 2 {
			t.Fatalf("%d calls with no more events, want 2", n)
		}
	})
}

// A remote server's JSON reply is read whole by the SDK: past 16 MiB it is
// refused instead.
func TestRemoteRepliesAreBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		size := MaxMessageBytes
		if r.URL.Path == "/big" {
			size++
		}
		w.Write([]byte(strings.Repeat(" ", size)))
	}))
	defer srv.Close()
	hc := httpClient(srv.URL, nil)
	for path, wantErr := range map[string]bool{"/exact": false, "/big": true} {
		resp, err := hc.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if wantErr != errors.Is(err, errMessageTooLarge) {
			t.Errorf("%s: read %d bytes, err %v", path, len(data), err)
		}
	}
}

// A server that sends a hundred sampling requests at once gets most of them
// refused with -32000 before they reach the person; only the burst is
// reviewed.
func TestSamplingFloodNeverReachesThePerson(t *testing.T) {
	bin := hostileServer(t)
	e := newEnv(t)
	rep := filepath.Join(t.TempDir(), "report.json")
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "flood", Type: app.TransportStdio, Command: bin,
			Args: []string{"-mode", "sampling-flood", "-n", "100", "-report", rep}})
	})
	rev := &person{}
	opts := e.fastOptions()
	opts.Reviewer = rev
	e.start(opts)
	var counts struct {
		OK     int            `json:"ok"`
		Errors map[string]int `json:"errors"`
	}
	apptest.Eventually(t, "all 100 requests answered", func() (bool, string) {
		data, _ := os.ReadFile(rep)
		json.Unmarshal(data, &counts)
		total := counts.OK
		for _, n := range counts.Errors {
			total += n
		}
		return total == 100, string(data)
	})
	reviewed, _ := rev.seen()
	refused := counts.Errors["-32000"]
	if refused < 80 || len(reviewed) > 100-refused || len(reviewed) > 12 {
		t.Fatalf("%d refused, %d reviewed; want most refused and the rest (at most the burst) reviewed: %+v", refused, len(reviewed), counts)
	}
}

// Through a burst of changes far beyond the gate's rate the server never
// keeps an old list: the last change (a revoke) always lands. Two things
// hold it, each enough here: a roots/list that follows Rootkeeper's own
// list_changed is let through unmetered (up to maxAsked owed), and a
// roots/list the gate refused is followed, once the gate admits one again,
// by a fresh list_changed. The test fails only when both are gone (seen).
func TestLastRootsChangeLandsThroughABurst(t *testing.T) {
	r := listenReports(t)
	e := newEnv(t)
	base, x, y := mkRoot(t, "base"), mkRoot(t, "x"), mkRoot(t, "y")
	e.addRootServer(rootServer(t), r, "s", "")
	e.addRoots(base, x, y)
	e.grant("s", base)
	opts := e.fastOptions()
	// roots/list may come 10 a second, 10 at once: a burst of 60 changes
	// is far beyond.
	opts.RequestsPerSecond, opts.RequestBurst = 1, 1
	e.start(opts)
	r.expectRoots(t, "s", app.URIFromPath(base))
	for i := range 60 {
		switch {
		case i == 59:
			// The last change revokes x and grants y: a list the server
			// has never had, so it cannot have got it early.
			e.update(func(s *app.State) error {
				s.Revoke("s", x)
				return s.Decide(app.Decision{Server: "s", Root: y, Verdict: app.Allow, By: app.ByCommandLine})
			})
		case i%2 == 0:
			e.grant("s", x)
		default:
			e.revoke("s", x)
		}
	}
	// What the server gets last must be that list, once the gate has let
	// it ask again.
	want := []string{app.URIFromPath(base), app.URIFromPath(y)}
	slices.Sort(want)
	var last []string
	hung := time.After(apptest.Patience)
	for !slices.Equal(last, want) {
		select {
		case rep := <-r.ch("s"):
			if rep.event == "roots" {
				last = slices.Sorted(slices.Values(rep.uris()))
			}
		case <-hung:
			t.Fatalf("the server last got %q, want %q (hung?)", last, want)
		}
	}
}
