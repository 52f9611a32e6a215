package app

import (
	"fmt"
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
		{"/media", "list", ""},                                // mount points, probed for volumes: never
		{"/media/me", "list", ""},
		{"/mnt", "list", ""},
		{"/media/me/usb stick/doc.txt", "read", "/media/me/usb stick"}, // a volume's own folders: asked
		{"/mnt/data/x.txt", "read", "/mnt/data"},
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

func TestReachRequestTextAndAllowOnce(t *testing.T) {
	st := requestState(t)
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if ok, err := st.AddReachRequest("fs", "/srv/docs/taxes", "/srv/docs/taxes/2025.pdf", "read", at); !ok || err != nil {
		t.Fatalf("AddReachRequest: %v %v", ok, err)
	}
	r, _ := st.Request("fs", "/srv/docs/taxes")
	if got, want := RequestText(r), "fs tried to read /srv/docs/taxes/2025.pdf — allow /srv/docs/taxes?"; got != want {
		t.Errorf("RequestText = %q, want %q", got, want)
	}
	if err := st.GrantOnce("fs", "/srv/other", ByCommandLine, at); err == nil {
		t.Error("allow once without an attempt waiting was accepted")
	}
	if err := st.GrantOnce("fs", "/srv/docs/taxes", ByCommandLine, at.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, open := st.Request("fs", "/srv/docs/taxes"); open {
		t.Error("the request stayed open after allow once")
	}
	if _, decided := st.Decision("fs", "/srv/docs/taxes"); decided {
		t.Error("allow once recorded a decision: it must widen nothing")
	}
	if !st.OnceAfter("fs", "/srv/docs/taxes", at) || st.OnceAfter("fs", "/srv/docs/taxes", at.Add(2*time.Second)) {
		t.Error("OnceAfter: once counts for the attempts made before it only")
	}
	// The next attempt asks again; a deny is never asked again.
	if ok, _ := st.AddReachRequest("fs", "/srv/docs/taxes", "/srv/docs/taxes/2024.pdf", "read", at.Add(3*time.Second)); !ok {
		t.Error("the next attempt after allow once did not ask again")
	}
	if err := st.DecideRequest(Decision{Server: "fs", Root: "/srv/docs/taxes", Verdict: Deny, Scope: Always, By: ByCommandLine}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := st.AddReachRequest("fs", "/srv/docs/taxes", "/srv/docs/taxes/2023.pdf", "read", at.Add(time.Hour)); ok {
		t.Error("a denied folder was asked about again")
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
		if ok, _ := st.AddReachRequest("fs", folder, path, "read", now); ok {
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
