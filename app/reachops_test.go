package app

import (
	"testing"
	"time"
)

// TestOpsSayWhatTheyDo: every operation the observer reports is shown in
// words and judged: the changes (a replace among them) write, a watch and
// a listing only look, a program run is neither.
func TestOpsSayWhatTheyDo(t *testing.T) {
	for _, tc := range []struct {
		op, text      string
		writes, reads bool
	}{
		{OpRead, "read", false, true},
		{OpList, "list", false, true},
		{OpWatch, "watch for changes in", false, true},
		{OpWrite, "change", true, false},
		{OpTruncate, "empty and rewrite", true, false},
		{OpCreate, "create", true, false},
		{OpReplace, "replace (empty and rewrite)", true, false},
		{OpMkdir, "make the folder", true, false},
		{OpRename, "rename", true, false},
		{OpExecute, "run", false, false},
	} {
		if got := OpText(tc.op); got != tc.text {
			t.Errorf("OpText(%s) = %q, want %q", tc.op, got, tc.text)
		}
		if OpWrites(tc.op) != tc.writes || OpOnlyReads(tc.op) != tc.reads {
			t.Errorf("%s: writes %v reads %v, want %v %v", tc.op, OpWrites(tc.op), OpOnlyReads(tc.op), tc.writes, tc.reads)
		}
	}
	// A watch is asked about as the folder watched, like a listing.
	c := ReachContext{Home: "/home/me"}
	if f, ok := ReachFolder("/home/me/secret", OpWatch, c); !ok || f != "/home/me/secret" {
		t.Errorf("ReachFolder of a watch = %q, %v; want the folder itself", f, ok)
	}
	if _, ok := ReachFolder("/home/me", OpWatch, c); ok {
		t.Error("a watch on the home folder as a whole is asked about")
	}
}

// TestReachQuestionDefaultsToDenyForEveryChange: Enter is allow once only
// while every waiting call only looks; a truncate, a replace or a create
// joined to a read makes it Deny; a watch (which allow once cannot do)
// beside a read keeps it allow once, for the read.
func TestReachQuestionDefaultsToDenyForEveryChange(t *testing.T) {
	const folder = "/srv/secret"
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	read := ReachCall{ID: "r", Op: OpRead, Path: folder + "/a.txt"}
	for _, tc := range []struct {
		join ReachCall
		def  ReachAnswer
	}{
		{ReachCall{ID: "t", Op: OpTruncate, Path: folder + "/a.txt"}, ReachDeny},
		{ReachCall{ID: "p", Op: OpReplace, Path: folder + "/a.txt"}, ReachDeny},
		{ReachCall{ID: "c", Op: OpCreate, Path: folder + "/n.txt"}, ReachDeny},
		{ReachCall{ID: "w", Op: OpWatch, Path: folder, NotOnce: "a watch cannot be set for it once"}, ReachOnce},
	} {
		st := requestState(t)
		st.AskReach("fs", folder, read, at, true)
		st.AskReach("fs", folder, tc.join, at, true)
		r, _ := st.Request("fs", folder)
		if q := ReachQuestionOf(r, at.Add(time.Second), nil); q.Default != tc.def {
			t.Errorf("a read and a %s: default %v, want %v", tc.join.Op, q.Default, tc.def)
		}
	}
}
