package app

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestOfferable(t *testing.T) {
	st := &State{}
	if err := st.AddRoot(Root{Path: "/home/ada/src/added", Name: "added"}); err != nil {
		t.Fatal(err)
	}
	found := []Candidate{
		{Path: "/home/ada/src/web", Kind: "repo", Repo: "/home/ada/src/web"},
		{Path: "/home/ada/src/web/frontend", Kind: "project", Repo: "/home/ada/src/web"}, // inside a found repo
		{Path: "/home/ada/src/api10", Kind: "repo", Repo: "/home/ada/src/api10"},
		{Path: "/home/ada/src/api9", Kind: "repo", Repo: "/home/ada/src/api9"},
		{Path: "/home/ada/src/added", Kind: "repo"},                           // a root already
		{Path: "/home/ada", Kind: "repo", Repo: "/home/ada"},                  // dotfiles: never the home folder
		{Path: "/home/ada/src/web/vendor/lib", Kind: "repo", Submodule: true}, // submodule
		{Path: "/home/ada/backup.git", Kind: "repo", Bare: true},              // bare
		{Path: "/home/ada/Documents/thesis", Kind: "project", Markers: []string{"Makefile"}},
		{Path: "/home/ada/src/api9", Kind: "repo", Repo: "/home/ada/src/api9"}, // reported twice
	}
	var got []string
	for _, c := range Offerable(st, found, nil, "/home/ada/") {
		got = append(got, c.Path)
	}
	want := []string{"/home/ada/Documents/thesis", "/home/ada/src/api9", "/home/ada/src/api10", "/home/ada/src/web"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Offerable (-want +got):\n%s", diff)
	}

	// A later start mentions only what it did not see before.
	seen := map[string]bool{"/home/ada/src/web": true, "/home/ada/src/api9": true, "/home/ada/Documents/thesis": true}
	got = nil
	for _, c := range Offerable(st, found, seen, "/home/ada") {
		got = append(got, c.Path)
	}
	if diff := cmp.Diff([]string{"/home/ada/src/api10"}, got); diff != "" {
		t.Errorf("Offerable with seen (-want +got):\n%s", diff)
	}
}

func TestGroupByParent(t *testing.T) {
	cs := []Candidate{{Path: "/h/Documents/thesis"}, {Path: "/h/src/a"}, {Path: "/h/src/b"}, {Path: "/h/code/x"}}
	var got []string
	for _, g := range GroupByParent(cs) {
		for _, c := range g.Candidates {
			got = append(got, g.Parent+" "+c.Path)
		}
	}
	want := []string{"/h/Documents /h/Documents/thesis", "/h/code /h/code/x", "/h/src /h/src/a", "/h/src /h/src/b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GroupByParent (-want +got):\n%s", diff)
	}
}

func TestAddFoundSharesNothing(t *testing.T) {
	st := &State{Servers: []Server{{Name: "fs", Type: TransportStdio, Command: "x"}}}
	if err := st.AddRoot(Root{Path: "/h/src/a", Name: "a"}); err != nil {
		t.Fatal(err)
	}
	n := st.AddFound([]Root{{Path: "/h/src/a", Name: "a"}, {Path: "/h/src/b", Name: "b", Source: SourceGit}})
	if n != 1 || len(st.Roots) != 2 {
		t.Fatalf("added %d, roots %v", n, st.Roots)
	}
	if b, _ := st.Root("/h/src/b"); !b.Enabled {
		t.Errorf("the added folder is not enabled: %+v", b)
	}
	if len(st.Decisions) != 0 {
		t.Errorf("adding decided something: %v", st.Decisions)
	}
	snap := &Snapshot{State: *st, Health: map[string]Health{"/h/src/b": {Status: HealthOK}}}
	if v := VisiblePaths(snap, "fs"); len(v) != 0 {
		t.Errorf("fs sees %v after an add", v)
	}
}

func TestSeenProjectsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if _, ok := LoadSeenProjects(dir); ok {
		t.Fatal("a fresh folder has seen projects")
	}
	if err := SaveSeenProjects(dir, []string{"/b", "/a", "/b"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	seen, ok := LoadSeenProjects(dir)
	if !ok || len(seen) != 2 || !seen["/a"] || !seen["/b"] {
		t.Errorf("LoadSeenProjects = %v, %v", seen, ok)
	}
}
