package app

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOnceByPathLetsOnlyReadsThrough: an allow once that names a path
// picks the reads: the folder's reads, listings and watches, or a file's
// reads; a change of the very file named (a truncate that joined the
// read), a replace, a create or a program run is withheld, never picked;
// a call allow once cannot do is picked so that GrantOnce says why.
func TestOnceByPathLetsOnlyReadsThrough(t *testing.T) {
	const folder = "/srv/secret"
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	a := folder + "/a.txt"
	calls := []ReachCall{
		{ID: "read", Op: OpRead, Path: a},
		{ID: "trunc", Op: OpTruncate, Path: a},
		{ID: "replace", Op: OpReplace, Path: a},
		{ID: "readb", Op: OpRead, Path: folder + "/b.txt"},
		{ID: "create", Op: OpCreate, Path: folder + "/n.txt"},
		{ID: "list", Op: OpList, Path: folder + "/d"},
		{ID: "watch", Op: OpWatch, Path: folder + "/d", NotOnce: "a watch cannot be set for it once"},
		{ID: "run", Op: OpExecute, Path: folder + "/x"},
		{ID: "mkdir", Op: OpMkdir, Path: folder + "/e", NotOnce: "a folder cannot be made for it once"},
	}
	st := requestState(t)
	for _, c := range calls {
		st.AskReach("fs", folder, c, at, true)
	}
	r, _ := st.Request("fs", folder)
	ids := func(cs []ReachCall) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	for _, tc := range []struct {
		target       string
		picked, held []string
		ok           bool
	}{
		{a, []string{"read"}, []string{"trunc", "replace"}, true},
		{folder, []string{"read", "readb", "list", "watch", "mkdir"}, []string{"trunc", "replace", "create", "run"}, true},
		{folder + "/n.txt", nil, []string{"create"}, true},
		{folder + "/d", []string{"list", "watch"}, nil, true},
		{folder + "/zzz", nil, nil, false},
	} {
		picked, held, ok := r.OnceCalls(tc.target, at.Add(time.Second))
		if !slices.Equal(picked, tc.picked) || !slices.Equal(ids(held), tc.held) || ok != tc.ok {
			t.Errorf("OnceCalls(%s) = %q, withheld %q, %v; want %q, %q, %v", tc.target, picked, ids(held), ok, tc.picked, tc.held, tc.ok)
		}
	}
}

// TestShortCallIDs: six characters where they tell the calls apart, more
// where two ids begin alike, a short id whole; ShortIDs sets them on the
// calls that wait, across a server's requests, and changes nothing in the
// state it was given.
func TestShortCallIDs(t *testing.T) {
	got := ShortCallIDs([]ReachCall{{ID: "3fa9c1d2e0b4a789"}, {ID: "3fa9c1ff00000000"}, {ID: "77e0a1b2c3d4e5f6"}, {ID: "c1"}, {ID: "c1x"}})
	want := map[string]string{"3fa9c1d2e0b4a789": "3fa9c1d", "3fa9c1ff00000000": "3fa9c1f", "77e0a1b2c3d4e5f6": "77e0a1", "c1": "c1", "c1x": "c1x"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ShortCallIDs = %v, want %v", got, want)
	}

	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	st := requestState(t)
	st.AskReach("fs", "/srv/a", ReachCall{ID: "abcdef0000000001", Op: OpRead, Path: "/srv/a/x"}, at, true)
	st.AskReach("fs", "/srv/b", ReachCall{ID: "abcdef0000000002", Op: OpRead, Path: "/srv/b/x"}, at, true)
	before := st.Clone()
	reqs := ShortIDs(st.RequestsFor("fs"), at.Add(time.Second))
	if reqs[0].Calls[0].Short != "abcdef0000000001" || reqs[1].Calls[0].Short != "abcdef0000000002" {
		t.Errorf("short ids across two folders: %q, %q; want them unique", reqs[0].Calls[0].Short, reqs[1].Calls[0].Short)
	}
	if !reflect.DeepEqual(before, st.Clone()) {
		t.Error("ShortIDs changed the state")
	}
	if reqs := ShortIDs(st.RequestsFor("fs"), at.Add(time.Hour)); reqs[0].Calls[0].Short != "" {
		t.Error("a call whose wait ran out got a short id")
	}
}

// TestGrantOnceCallsAnswersExactlyTheIDsNamed: calls named by short or
// full id are let through across folders, each with its own access (a
// truncate among them); the calls not named on those requests are
// refused; the requests are dropped, and a request not named stays. An
// id naming no waiting call, a repeated one, a call whose wait ran out,
// or a request whose named calls allow once can do none of is refused
// naming it, and nothing changes.
func TestGrantOnceCallsAnswersExactlyTheIDsNamed(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	read := ReachCall{ID: "aaaaaa0000000001", Op: OpRead, Path: "/srv/a/x"}
	trunc := ReachCall{ID: "bbbbbb0000000002", Op: OpTruncate, Path: "/srv/a/x"}
	create := ReachCall{ID: "cccccc0000000003", Op: OpCreate, Path: "/srv/b/n"}
	other := ReachCall{ID: "dddddd0000000004", Op: OpRead, Path: "/srv/c/y"}
	mkdir := ReachCall{ID: "eeeeee0000000005", Op: OpMkdir, Path: "/srv/e/d", NotOnce: "a folder cannot be made for it once"}
	ask := func() *State {
		st := requestState(t)
		st.AskReach("fs", "/srv/a", read, at, true)
		st.AskReach("fs", "/srv/a", trunc, at, true)
		st.AskReach("fs", "/srv/b", create, at, true)
		st.AskReach("fs", "/srv/c", other, at, true)
		st.AskReach("fs", "/srv/e", mkdir, at, true)
		return st
	}

	st := ask()
	answers, err := st.GrantOnceCalls("fs", []string{"bbbbbb", "cccccc0000000003", "bbbbbb0000000002"}, ByCommandLine, at.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(answers) != 2 || answers[0].Folder != "/srv/a" || !reflect.DeepEqual(answers[0].Let, []ReachCall{trunc}) ||
		answers[1].Folder != "/srv/b" || !reflect.DeepEqual(answers[1].Let, []ReachCall{create}) {
		t.Fatalf("answers %+v; want the truncate on /srv/a and the create on /srv/b", answers)
	}
	for id, want := range map[string]bool{trunc.ID: true, create.ID: true, read.ID: false, other.ID: false} {
		if _, ok := st.OnceFor("fs", id); ok != want {
			t.Errorf("call %s answered: %v, want %v", id, ok, want)
		}
	}
	for folder, open := range map[string]bool{"/srv/a": false, "/srv/b": false, "/srv/c": true} {
		if _, ok := st.Request("fs", folder); ok != open {
			t.Errorf("request for %s open: %v, want %v", folder, ok, open)
		}
	}

	for _, tc := range []struct {
		refs []string
		at   time.Time
		want string
	}{
		{[]string{"bbbbbb", "ffffff"}, at.Add(time.Second), `"ffffff" names no call of fs waiting now`},
		{[]string{"bbbbb"}, at.Add(time.Second), `"bbbbb" names no call`}, // not its short id
		{[]string{"bbbbbb"}, at.Add(time.Hour), `"bbbbbb" names no call`}, // its wait ran out
		{[]string{"aaaaaa", "eeeeee"}, at.Add(time.Second), "make the folder /srv/e/d, which allow once cannot let through"},
	} {
		st := ask()
		before := st.Clone()
		if _, err := st.GrantOnceCalls("fs", tc.refs, ByCommandLine, tc.at); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("GrantOnceCalls(%q): %v, want an error saying %q", tc.refs, err, tc.want)
		}
		if !reflect.DeepEqual(before, st.Clone()) {
			t.Errorf("GrantOnceCalls(%q) refused, and changed the state", tc.refs)
		}
	}
	if _, err := ask().GrantOnceCalls("nobody", []string{"aaaaaa"}, ByCommandLine, at); err == nil {
		t.Error("calls of an unknown server were answered")
	}
}
