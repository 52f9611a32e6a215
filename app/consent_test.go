package app

import (
	"testing"
	"time"
)

// consentSnap: servers a and b (connected or as given), roots x and y
// enabled, and a request for b.
func consentSnap(t *testing.T, states map[string]ServerState, since time.Time) *Snapshot {
	t.Helper()
	st := State{}
	for _, n := range []string{"a", "b"} {
		must(t, st.AddServer(Server{Name: n, Type: TransportStdio, Command: "srv"}))
	}
	for _, p := range []string{"/home/p/x", "/home/p/y"} {
		must(t, st.AddRoot(Root{Path: p, Enabled: true}))
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, err := st.AddRequest("b", "/home/p/asked", "claude-code 2", at); err != nil {
		t.Fatal(err)
	}
	servers := map[string]ServerStatus{}
	for n, s := range states {
		servers[n] = ServerStatus{State: s, Since: since}
	}
	return &Snapshot{State: st, Servers: servers}
}

func TestConsentQueueAsksInOrder(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t.Run("a server still starting: wait for it", func(t *testing.T) {
		q := &ConsentQueue{}
		ask := q.Next(NewGrid(consentSnap(t, map[string]ServerState{"a": ServerConnected, "b": ServerStarting}, now.Add(-time.Second))), now)
		if ask.Kind != AskWait || ask.Wait != QuestionSettle-time.Second {
			t.Fatalf("ask %+v", ask)
		}
	})
	t.Run("one question: the small dialog", func(t *testing.T) {
		q := &ConsentQueue{}
		snap := consentSnap(t, map[string]ServerState{"a": ServerConnected}, now)
		must(t, snap.State.Decide(Decision{Server: "a", Root: "/home/p/x", Verdict: Allow}))
		ask := q.Next(NewGrid(snap), now)
		if ask.Kind != AskQuestion || len(ask.Questions) != 1 || ask.Questions[0].Root.Path != "/home/p/y" {
			t.Fatalf("ask %+v", ask)
		}
	})
	t.Run("several: one review; Later, then the request; a new question, the review again", func(t *testing.T) {
		q := &ConsentQueue{}
		snap := consentSnap(t, map[string]ServerState{"a": ServerConnected, "b": ServerConnected}, now)
		g := NewGrid(snap)
		ask := q.Next(g, now)
		if ask.Kind != AskReview || len(ask.Questions) != 4 {
			t.Fatalf("ask %+v", ask)
		}
		q.PutOff(ask.Questions)
		if n := q.Waiting(g); n != 4 {
			t.Errorf("waiting %d", n)
		}
		ask = q.Next(g, now)
		if ask.Kind != AskRequest || ask.Request.Path != "/home/p/asked" {
			t.Fatalf("after Later: %+v", ask)
		}
		q.PutOffRequest(ask.Request)
		if ask := q.Next(g, now); ask.Kind != AskNothing {
			t.Fatalf("after both put off: %+v", ask)
		}
		// The request asked anew: asked again.
		snap.State.TouchRequest("b", "/home/p/asked", now.Add(time.Hour))
		if ask := q.Next(NewGrid(snap), now); ask.Kind != AskRequest {
			t.Fatalf("a request asked anew: %+v", ask)
		}
		// A new folder: a new question, so the review comes back.
		must(t, snap.State.AddRoot(Root{Path: "/home/p/z", Enabled: true}))
		if ask := q.Next(NewGrid(snap), now); ask.Kind != AskReview || len(ask.Questions) != 6 {
			t.Fatalf("a new question: %+v", ask)
		}
		q.ReviewAll()
		if q.Waiting(NewGrid(snap)) != 0 {
			t.Error("review all left questions put off")
		}
	})
	t.Run("a server being answered is not asked twice", func(t *testing.T) {
		q := &ConsentQueue{}
		g := NewGrid(consentSnap(t, map[string]ServerState{"a": ServerConnected, "b": ServerConnected}, now))
		q.Answering("a")
		ask := q.Next(g, now)
		if ask.Kind != AskReview || len(ask.Questions) != 2 || ask.Questions[0].Server != "b" {
			t.Fatalf("ask %+v", ask)
		}
		if fresh := q.Fresh(g, map[string]bool{QuestionKey(ask.Questions[0]): true}); len(fresh) != 1 {
			t.Errorf("fresh %+v", fresh)
		}
		q.Answered("a")
		if ask := q.Next(g, now); len(ask.Questions) != 4 {
			t.Errorf("after the answer: %+v", ask)
		}
	})
}

func TestRequestAnswers(t *testing.T) {
	r := Request{Server: "fs", Path: "/home/p/Desktop"}
	if d := RequestDecision(r, false, UntilQuit, ByDialog); d.Verdict != Deny || d.Root != r.Path || d.Scope != UntilQuit {
		t.Errorf("decision %+v", d)
	}
	if root := RequestRoot(r); root.Name != "Desktop" || !root.Enabled || root.Source != SourceRequested {
		t.Errorf("root %+v", root)
	}
	allowed, denied := Ticked([]string{"/a", "/b", "/c"}, []bool{false, true})
	if len(allowed) != 1 || allowed[0] != "/b" || len(denied) != 2 {
		t.Errorf("ticked %q, rest %q", allowed, denied)
	}
}

// TestAWindowThatEndsLeavesItsQuestionForTheNext: what was asked when a
// window ended (PutOffAll, in the running app) brings no window up again
// and is not handed on as put off (Later): the next window asks it again.
// What the person put off with Later is handed on, and not asked; asked
// anew, it is. AskFirst asks a request now, put off or not; a request
// whose calls wait comes before the others.
func TestAWindowThatEndsLeavesItsQuestionForTheNext(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	snap := consentSnap(t, map[string]ServerState{"a": ServerConnected}, now)
	_, err := snap.State.AddRequest("b", "/home/p/other", "claude-code 2", now)
	must(t, err)
	g := NewGrid(snap)

	var hub ConsentQueue
	hub.PutOffAll(g)
	if ask := hub.Next(g, now); ask.Kind != AskNothing {
		t.Fatalf("the running app asks %+v after the window ended", ask)
	}
	var win ConsentQueue
	win.SetLater(hub.Later())
	ask := win.Next(g, now)
	if ask.Kind != AskReview {
		t.Fatalf("the next window asks %+v, want the review again", ask)
	}
	// The person puts off the review and one request: the window tells
	// the app, which hands it to the window after.
	win.PutOff(ask.Questions)
	win.PutOffRequest(win.Next(g, now).Request)
	hub.SetLater(win.Later())
	var next ConsentQueue
	next.SetLater(hub.Later())
	if ask := next.Next(g, now); ask.Kind != AskRequest || ask.Request.Path != "/home/p/other" {
		t.Fatalf("the window after asks %+v, want only the request not put off", ask)
	}
	// Clicked in the tray: asked first, put off or not.
	next.AskFirst("b", "/home/p/asked")
	if ask := next.Next(g, now); ask.Kind != AskRequest || ask.Request.Path != "/home/p/asked" {
		t.Fatalf("AskFirst: %+v", ask)
	}
	// A confined server's call waits: its request comes first.
	next = ConsentQueue{}
	next.PutOffAll(g) // nothing old in the way
	_, err = snap.State.AskReach("b", "/home/p/reached", ReachCall{ID: "c", Op: OpRead, Path: "/home/p/reached/f"}, now, true)
	must(t, err)
	if ask := next.Next(NewGrid(snap), now); ask.Kind != AskRequest || ask.Request.Path != "/home/p/reached" {
		t.Fatalf("with a call waiting: %+v", ask)
	}
}
