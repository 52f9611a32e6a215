package app

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReachFolderAsksAboutWhatAPersonWouldRecognise(t *testing.T) {
	projects := map[string]bool{"/home/me/src/x": true}
	c := ReachContext{
		Home:      "/home/me",
		Skip:      []string{"/home/me/.local/state/rootkeeper/tmp/fs"},
		Roots:     []string{"/home/me/Documents", "/data/photos"},
		IsProject: func(d string) bool { return projects[d] },
	}
	for _, tc := range []struct {
		path, op, want string
	}{
		{"/home/me/src/x/internal/a.go", "read", "/home/me/src/x"},           // the enclosing project
		{"/home/me/Documents/taxes/2025.pdf", "read", "/home/me/Documents"},  // the enclosing root
		{"/home/me/Pictures/2024/cat.jpg", "read", "/home/me/Pictures/2024"}, // the folder itself
		{"/home/me/Pictures/2024", "list", "/home/me/Pictures/2024"},         // a list: the folder listed
		{"/data/photos/a/b.jpg", "read", "/data/photos"},
		{"/home/me/.ssh/id_ed25519", "read", "/home/me/.ssh"}, // asked, and worth a no
		{"/home/me/notes.txt", "read", ""},                    // the home folder as a whole: never
		{"/home/me", "list", ""},
		{"/etc2", "read", ""}, // / as a whole: never
		{"/", "list", ""},
		{"/proc/1/environ", "read", ""},
		{"/sys/kernel/x", "read", ""},
		{"/dev/tty", "write", ""},
		{"/usr/lib/x.so", "read", ""},
		{"/etc/passwd", "read", ""},
		{"/home/me/.cache/x/y", "read", ""},
		{"/home/me/.npm/_cacache/x", "read", ""},
		{"/home/me/src/node_modules/x/package.json", "read", ""},
		{"/home/me/work/package.json", "read", ""}, // node's probe up the tree
		{"/home/me/.local/state/rootkeeper/tmp/fs/x", "write", ""},
	} {
		got, ok := ReachFolder(tc.path, tc.op, c)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("ReachFolder(%s, %s) = %q, %v; want %q", tc.path, tc.op, got, ok, tc.want)
		}
	}
}

func TestReachRequestText(t *testing.T) {
	st := requestState(t)
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	call := ReachCall{ID: "r1", Op: OpRead, Path: "/srv/docs/taxes/2025.pdf"}
	if _, err := st.AskReach("fs", "/srv/docs/taxes", call, at, true); err != nil {
		t.Fatal(err)
	}
	r, _ := st.Request("fs", "/srv/docs/taxes")
	if got, want := RequestText(r), "fs tried to read /srv/docs/taxes/2025.pdf — allow /srv/docs/taxes?"; got != want {
		t.Errorf("RequestText = %q, want %q", got, want)
	}
}

// TestAllowOnceAnswersExactlyTheCallsShown: the calls that come while a
// folder is asked join its request; allow once answers the ones named (the
// ones the person was shown), each as its own call, records no decision and
// drops the request; a call not named is not answered; a call allow once
// cannot do (a mkdir) is refused by name, and alone it makes allow once an
// error that changes nothing.
func TestAllowOnceAnswersExactlyTheCallsShown(t *testing.T) {
	const folder = "/srv/secret"
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	read := ReachCall{ID: "read", Op: OpRead, Path: folder + "/a.txt"}
	trunc := ReachCall{ID: "trunc", Op: OpTruncate, Path: folder + "/b.txt"}
	mkdir := ReachCall{ID: "mkdir", Op: OpMkdir, Path: folder + "/d", NotOnce: "a folder cannot be made for it once"}

	st := requestState(t)
	until, err := st.AskReach("fs", folder, read, at, true)
	if err != nil || !until.Equal(at.Add(DefaultReachWait)) {
		t.Fatalf("first call: wait until %v, %v; want %v", until, err, at.Add(DefaultReachWait))
	}
	for _, c := range []ReachCall{trunc, mkdir} {
		if u, _ := st.AskReach("fs", folder, c, at.Add(time.Second), true); !u.Equal(until) {
			t.Errorf("%s while the folder is asked: waits until %v, want %v (the first call's)", c.ID, u, until)
		}
	}
	r, _ := st.Request("fs", folder)
	if got := len(r.Waiting(at.Add(2 * time.Second))); got != 3 {
		t.Fatalf("%d calls wait on the request, want 3: %+v", got, r.Calls)
	}

	ans, err := st.GrantOnce("fs", folder, []string{"read", "mkdir"}, ByDialog, at.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(ans.Let) != 1 || ans.Let[0] != read || len(ans.NotLet) != 1 || ans.NotLet[0] != mkdir {
		t.Errorf("allow once of the read and the mkdir: let %+v, not let %+v", ans.Let, ans.NotLet)
	}
	if _, ok := st.OnceFor("fs", "read"); !ok {
		t.Error("the read shown was not answered")
	}
	for _, id := range []string{"trunc", "mkdir"} {
		if _, ok := st.OnceFor("fs", id); ok {
			t.Errorf("allow once answered %s", id)
		}
	}
	if _, open := st.Request("fs", folder); open {
		t.Error("the request stayed open after allow once")
	}
	if _, decided := st.Decision("fs", folder); decided {
		t.Error("allow once recorded a decision: it must widen nothing")
	}

	// Only a mkdir waits: allow once is refused, naming it, and nothing
	// changes.
	st = requestState(t)
	st.AskReach("fs", folder, mkdir, at, true)
	before := st.Clone()
	if _, err := st.GrantOnce("fs", folder, nil, ByCommandLine, at.Add(time.Second)); err == nil || !strings.Contains(err.Error(), "make the folder "+folder+"/d") || !strings.Contains(err.Error(), "grant fs "+folder) {
		t.Errorf("allow once of a mkdir alone: %v", err)
	}
	if !reflect.DeepEqual(before, st.Clone()) {
		t.Error("a refused allow once changed the state")
	}
}

// TestAPersonNotThereIsNotWaitedFor: with nobody to ask the request is
// recorded and the call refused (no wait); a call on a folder asked before
// is refused at once and not listed, whether the first was asked of nobody
// or its wait ran out; allow once then lets nothing through and says so.
func TestAPersonNotThereIsNotWaitedFor(t *testing.T) {
	const folder = "/srv/secret"
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	call := func(id string) ReachCall { return ReachCall{ID: id, Op: OpRead, Path: folder + "/" + id} }

	st := requestState(t)
	if u, err := st.AskReach("fs", folder, call("a"), at, false); !u.IsZero() || err != nil {
		t.Fatalf("nobody to ask: waits until %v, %v", u, err)
	}
	r, open := st.Request("fs", folder)
	if !open || !r.Unasked || r.Tried != folder+"/a" || len(r.Calls) != 0 {
		t.Fatalf("the request for later: %+v, open %v", r, open)
	}
	if u, _ := st.AskReach("fs", folder, call("b"), at.Add(time.Second), true); !u.IsZero() {
		t.Error("a call on a folder asked of nobody was held")
	}

	st = requestState(t)
	until, _ := st.AskReach("fs", folder, call("a"), at, true)
	if u, _ := st.AskReach("fs", folder, call("b"), until, true); !u.IsZero() {
		t.Error("a call after the wait ran out was held again")
	}
	r, _ = st.Request("fs", folder)
	if len(r.Calls) != 1 || len(r.Waiting(until)) != 0 {
		t.Errorf("after the wait: calls %+v, waiting %+v", r.Calls, r.Waiting(until))
	}
	ans, err := st.GrantOnce("fs", folder, nil, ByCommandLine, until.Add(time.Second))
	if err != nil || len(ans.Let)+len(ans.NotLet) != 0 || len(st.Once) != 0 {
		t.Errorf("allow once with nothing waiting: %+v %v, once %+v", ans, err, st.Once)
	}

	// A request lists at most MaxReachCalls; the next is refused at once.
	st = requestState(t)
	for i := range MaxReachCalls + 1 {
		u, _ := st.AskReach("fs", folder, call(fmt.Sprint(i)), at, true)
		if got := !u.IsZero(); got != (i < MaxReachCalls) {
			t.Errorf("call %d held: %v", i, got)
		}
	}

	// A denied folder is never asked about again.
	st = requestState(t)
	st.AskReach("fs", folder, call("a"), at, true)
	if err := st.DecideRequest(Decision{Server: "fs", Root: folder, Verdict: Deny, By: ByCommandLine}); err != nil {
		t.Fatal(err)
	}
	if u, _ := st.AskReach("fs", folder, call("b"), at.Add(time.Hour), true); !u.IsZero() {
		t.Error("a denied folder was asked about again")
	}
	if _, open := st.Request("fs", folder); open {
		t.Error("a denied folder got a request")
	}
}

func TestReachWaitSetting(t *testing.T) {
	for _, tc := range []struct {
		seconds int
		want    time.Duration
	}{{0, DefaultReachWait}, {30, 30 * time.Second}, {-5, MinReachWait}, {100000, MaxReachWait}} {
		st := State{Settings: &Settings{ReachWait: tc.seconds}}
		if got := st.ReachWait(); got != tc.want {
			t.Errorf("ReachWait with %d s = %v, want %v", tc.seconds, got, tc.want)
		}
	}
}

// TestHostileProberRaisesFewRequests: ten thousand attempts in a hundred
// folders, through the limiter and the state, raise at most one request per
// folder and no more than the limiter's burst in its first minute; the state
// stays bounded.
func TestHostileProberRaisesFewRequests(t *testing.T) {
	st := requestState(t)
	l := NewReachLimiter()
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	c := ReachContext{Home: "/home/me"}
	raised := 0
	for i := range 10000 {
		path := fmt.Sprintf("/home/me/probe/d%03d/f%05d", i%100, i)
		folder, ok := ReachFolder(path, "read", c)
		if !ok {
			t.Fatalf("%s: not asked", path)
		}
		now := at.Add(time.Duration(i) * time.Millisecond) // ten seconds in all
		if _, open := st.Request("fs", folder); open {
			continue
		}
		if !l.Allow("fs", now) {
			continue
		}
		if _, err := st.AskReach("fs", folder, ReachCall{ID: fmt.Sprint(i), Op: OpRead, Path: path}, now, false); err == nil {
			raised++
		}
	}
	if raised > 100 || raised > l.Burst+1 {
		t.Errorf("%d requests raised in ten seconds (burst %d)", raised, l.Burst)
	}
	if n := len(st.RequestsFor("fs")); n > MaxRequestsPerServer {
		t.Errorf("%d open requests", n)
	}
	if !strings.Contains(RequestText(st.Requests[0]), "fs tried to read ") {
		t.Errorf("RequestText: %q", RequestText(st.Requests[0]))
	}
}
