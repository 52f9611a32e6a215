package words

import (
	"testing"
	"unicode/utf8"
)

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

func TestCutMiddle(t *testing.T) {
	for _, c := range []struct {
		path string
		max  int
		want string
	}{
		{"~/src/api", 40, "~/src/api"},
		{"~/src/work/clients/acme/payments-api", 20, "~/src/…/payments-api"},
		{"~/src/work/clients/acme/payments-api", 30, "~/src/work/…/acme/payments-api"},
		{"~/src/work/clients/acme/payments-api", 29, "~/src/…/acme/payments-api"},
		{"~/src/work/clients/acme/payments-api", 36, "~/src/work/clients/acme/payments-api"},
		{"/srv/data/projects/2026/big-thing", 22, "/srv/…/2026/big-thing"},
		{"/srv/data/projects/2026/big-thing", 17, "/srv/…/big-thing"},
		// the last name alone is too long: cut inside, start and end kept
		{"~/src/an-extremely-long-project-name", 12, "~/src…t-name"},
		{"~/a/b", 4, "~…/b"},
		{"abcdef", 1, "…"},
		{`C:\Users\ada\src\clients\payments-api`, 24, `C:\Users\…\payments-api`},
		{"~/src/日本語/プロジェクト/とても長い名前のフォルダ", 20, "~/src/…/とても長い名前のフォルダ"},
		{"~/src/日本語/プロジェクト/とても長い名前のフォルダ", 19, "~/…/とても長い名前のフォルダ"},
	} {
		got := CutMiddle(c.path, c.max)
		if got != c.want {
			t.Errorf("CutMiddle(%q, %d) = %q, want %q", c.path, c.max, got, c.want)
		}
		if n := utf8.RuneCountInString(got); n > c.max && c.max > 0 {
			t.Errorf("CutMiddle(%q, %d) = %q: %d characters", c.path, c.max, got, n)
		}
	}
}
