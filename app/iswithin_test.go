package app

import "testing"

// TestIsWithin: a path is within a folder when it is the folder or below
// it, never when it merely starts with the folder's name.
func TestIsWithin(t *testing.T) {
	for _, c := range []struct {
		path, dir string
		want      bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b/c", "/a/b", true},
		{"/a/bc", "/a/b", false},
		{"/a", "/a/b", false},
		{"/a/b", "/", true},
		{"/", "/", true},
		{"/a/b", "/a/b/c", false},
		{"/x/a/b", "/a", false},
	} {
		if got := IsWithin(c.path, c.dir); got != c.want {
			t.Errorf("IsWithin(%q, %q) = %v, want %v", c.path, c.dir, got, c.want)
		}
	}
}

// BenchmarkIsWithin is the observer's question for one path a confined
// server opens, against a ruleset's folders.
func BenchmarkIsWithin(b *testing.B) {
	dirs := []string{"/usr", "/lib", "/etc/ssl", "/home/person/project", "/home/person/.cache/rootkeeper/tmp", "/opt/node/lib/node_modules"}
	for b.Loop() {
		for _, d := range dirs {
			IsWithin("/home/person/project/node_modules/zod/v4/classic/external.js", d)
		}
	}
}
