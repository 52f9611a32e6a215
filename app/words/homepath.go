package words

import (
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// HomeShort writes path the way people read it: under home it becomes
// "~/rest" (home itself "~"), anything else is unchanged. It is for what
// people read in the window (the dialogs too, with the whole path on
// hover); the command line, status --json and the audit log keep whole
// paths, so that what scripts read is never ambiguous. A path that merely
// starts with home's text ("/home/ada2" for "/home/ada") is not under it.
func HomeShort(path, home string) string {
	home = strings.TrimRight(home, `/\`)
	if home == "" || !filepath.IsAbs(path) {
		return path
	}
	if path == home {
		return "~"
	}
	rest, ok := strings.CutPrefix(path, home)
	if !ok || rest[0] != '/' && rest[0] != filepath.Separator {
		return path
	}
	return "~" + rest
}

// CutMiddle shortens a path written for people (see HomeShort) to at most
// max characters by leaving out folders in the middle: the start says
// where it is, the end which folder it is, as in "~/src/…/payments-api".
// Whole folder names are kept when they fit, the last one always; only a
// last name longer than max itself is cut inside, keeping its start and
// its end. A path that fits is returned unchanged. For labels only, like
// HomeShort.
func CutMiddle(path string, max int) string {
	const dots = "…"
	n := utf8.RuneCountInString(path)
	if n <= max {
		return path
	}
	if max < 3 {
		return cutRunes(path, max)
	}
	sep := "/"
	if !strings.Contains(path, "/") && strings.Contains(path, `\`) {
		sep = `\`
	}
	parts := strings.Split(path, sep)
	if len(parts) >= 3 {
		// head: parts[:h], tail: parts[t:]; everything between becomes "…".
		h, t := 1, len(parts)-1
		if parts[0] == "" { // "/etc/…": keep the first name with the root
			h = 2
		}
		build := func(h, t int) string {
			return strings.Join(parts[:h], sep) + sep + dots + sep + strings.Join(parts[t:], sep)
		}
		if h < t && utf8.RuneCountInString(build(h, t)) <= max {
			for grown := true; grown; {
				grown = false
				if t-1 > h && utf8.RuneCountInString(build(h, t-1)) <= max {
					t--
					grown = true
				}
				if h+1 < t && utf8.RuneCountInString(build(h+1, t)) <= max {
					h++
					grown = true
				}
			}
			return build(h, t)
		}
	}
	return cutRunes(path, max)
}

// cutRunes keeps the start and the end of s, max characters in all with
// "…" between; the end gets the larger half (a name's end tells names
// apart more often than its start).
func cutRunes(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	if max == 1 {
		return "…"
	}
	keep := max - 1
	front := keep / 2
	return string(r[:front]) + "…" + string(r[len(r)-(keep-front):])
}
