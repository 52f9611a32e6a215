package app

import "testing"

func TestHomeShort(t *testing.T) {
	const home = "/home/ada"
	for _, c := range []struct{ path, home, want string }{
		{"/home/ada/.claude.json", home, "~/.claude.json"},
		{"/home/ada/src/api", home + "/", "~/src/api"},
		{"/home/ada", home, "~"},
		{"/home/ada2/secret", home, "/home/ada2/secret"},
		{"/etc/hosts", home, "/etc/hosts"},
		{"/home/ada/x", "", "/home/ada/x"},
		{"relative/home/ada", home, "relative/home/ada"},
		{"/srv/x", "/", "/srv/x"},
	} {
		if got := HomeShort(c.path, c.home); got != c.want {
			t.Errorf("HomeShort(%q, %q) = %q, want %q", c.path, c.home, got, c.want)
		}
	}
}
