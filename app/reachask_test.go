package app

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReachQuestionSaysWhatWaitsAndTheSafeAnswer: Enter is allow once only
// while every waiting call only reads or lists and one can be let through;
// a write, or a call allow once cannot do, makes it Deny; once the wait
// ran out, or nobody was asked, nothing is answered once and it says why.
func TestReachQuestionSaysWhatWaitsAndTheSafeAnswer(t *testing.T) {
	const folder = "/srv/secret"
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	read := ReachCall{ID: "r", Op: OpRead, Path: folder + "/a.txt"}
	list := ReachCall{ID: "l", Op: OpList, Path: folder + "/d"}
	odd := ReachCall{ID: "o", Op: OpRead, Path: folder + "/b.txt", NotOnce: "resolve flags"}
	create := ReachCall{ID: "c", Op: OpCreate, Path: folder + "/new.txt"}
	run := ReachCall{ID: "x", Op: OpExecute, Path: folder + "/run", NotOnce: "a program cannot be run for it once"}
	for _, tc := range []struct {
		name  string
		calls []ReachCall
		once  bool
		def   ReachAnswer
	}{
		{"a read", []ReachCall{read}, true, ReachOnce},
		{"reads and a listing", []ReachCall{read, list}, true, ReachOnce},
		{"a read and one allow once cannot do", []ReachCall{read, odd}, true, ReachOnce},
		{"only what allow once cannot do", []ReachCall{odd}, false, ReachDeny},
		{"a read and a create", []ReachCall{read, create}, true, ReachDeny},
		{"a program run", []ReachCall{read, run}, true, ReachDeny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := requestState(t)
			for _, c := range tc.calls {
				st.AskReach("fs", folder, c, at, true)
			}
			r, _ := st.Request("fs", folder)
			q := ReachQuestionOf(r, at.Add(time.Second), nil)
			if !q.Waiting || q.Once != tc.once || q.Default != tc.def || q.Gone != "" {
				t.Errorf("question %+v, want once %v default %v", q, tc.once, tc.def)
			}
			var want []string
			for _, c := range tc.calls {
				want = append(want, c.ID)
			}
			if got := q.OnceIDs(); !slices.Equal(got, want) {
				t.Errorf("allow once answers %q, want %q (the calls shown)", got, want)
			}
		})
	}

	st := requestState(t)
	st.AskReach("fs", folder, read, at, true)
	st.AskReach("fs", folder, create, at, true)
	r, _ := st.Request("fs", folder)
	q := ReachQuestionOf(r, at.Add(DefaultReachWait), func(s string) string { return "<" + s + ">" })
	if q.Waiting || q.Once || q.Default != ReachDeny || len(q.Calls) != 2 || q.Gone != "<fs>'s 2 calls gave up after 10 s; they were refused" {
		t.Errorf("after the wait: %+v", q)
	}
	if ids := q.OnceIDs(); ids == nil || len(ids) != 0 {
		t.Errorf("after the wait allow once answers %#v, want none (not nil: every call)", ids)
	}

	st = requestState(t)
	st.AskReach("fs", folder, read, at, false)
	r, _ = st.Request("fs", folder)
	q = ReachQuestionOf(r, at, nil)
	if q.Waiting || q.Once || q.Gone != "Nobody was there to ask when fs tried this; it was refused" || len(q.Calls) != 1 || q.Calls[0].Path != read.Path {
		t.Errorf("nobody asked: %+v", q)
	}
	if got := waitText(90 * time.Second); got != "1 min 30 s" {
		t.Errorf("waitText(90 s) = %q", got)
	}
}

// TestAllowOnceAfterTheWaitKeepsTheRequest: allow once naming calls whose
// wait ran out lets nothing through, says so, and keeps the request for
// the person to decide.
func TestAllowOnceAfterTheWaitKeepsTheRequest(t *testing.T) {
	const folder = "/srv/secret"
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	st := requestState(t)
	until, _ := st.AskReach("fs", folder, ReachCall{ID: "r", Op: OpRead, Path: folder + "/a"}, at, true)
	_, err := st.GrantOnce("fs", folder, []string{"r"}, ByDialog, until)
	var in *InputError
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "no longer waits") {
		t.Errorf("allow once after the wait: %v", err)
	}
	if _, open := st.Request("fs", folder); !open || len(st.Once) != 0 {
		t.Errorf("request open %v, once %+v", open, st.Once)
	}
}

// TestRequestsByUrgency: requests whose calls wait come first, the wait
// ending soonest first; the rest keep their order.
func TestRequestsByUrgency(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	call := []ReachCall{{ID: "c"}}
	reqs := []Request{
		{Path: "/a"},
		{Path: "/late", Calls: call, Until: now.Add(8 * time.Second)},
		{Path: "/b"},
		{Path: "/over", Calls: call, Until: now},
		{Path: "/soon", Calls: call, Until: now.Add(2 * time.Second)},
	}
	var got []string
	for _, r := range RequestsByUrgency(reqs, now) {
		got = append(got, r.Path)
	}
	if want := []string{"/soon", "/late", "/a", "/b", "/over"}; !slices.Equal(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}

// TestCredentialNames: a folder whose name says it keeps credentials is
// warned of before it is shared or reached, as one that holds them.
func TestCredentialNames(t *testing.T) {
	home := "/home/key" // the person's name is no credential
	for path, want := range map[string]string{
		"/home/key/.ssh":                ".ssh",
		"/home/key/.ssh/keys":           ".ssh",
		"/home/key/.config/gcloud":      ".config/gcloud",
		"/home/key/secrets":             "secrets",
		"/home/key/src/app/api-keys":    "api-keys",
		"/home/key/Work/Tokens":         "Tokens",
		"/home/key/aws_credentials/old": "aws_credentials",
		"/srv/vault/x":                  "vault",
		"/home/key":                     "",
		"/home/key/src/monkeys":         "",
		"/home/key/src/keynote":         "",
		"/home/key/Documents":           "",
	} {
		if got := CredentialName(path, home); got != want {
			t.Errorf("CredentialName(%q) = %q, want %q", path, got, want)
		}
	}
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	w := RiskWarnings(Root{Path: secrets}, dir)
	if len(w) != 1 || !strings.Contains(w[0], "secrets") || !strings.Contains(w[0], "credentials") {
		t.Errorf("RiskWarnings of a folder called secrets: %q", w)
	}
}
