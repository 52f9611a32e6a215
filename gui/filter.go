package gui

import (
	"strings"
	"unicode/utf8"
)

// filterQuery is what a filter box holds, as its lists match it: trimmed
// and in lower case.
func filterQuery(text string) string { return strings.ToLower(strings.TrimSpace(text)) }

// matches reports whether the query q (filterQuery) is empty or found in
// one of fields, whatever their case. It allocates nothing for fields in
// ASCII: the Activity tab matches every keystroke against each line of a
// log that may hold 200,000.
func matches(q string, fields ...string) bool {
	if q == "" {
		return true
	}
	for _, f := range fields {
		if containsFold(f, q) {
			return true
		}
	}
	return false
}

// containsFold reports whether s holds q (in lower case) whatever the
// case of s.
func containsFold(s, q string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Contains(strings.ToLower(s), q)
		}
	}
	// s is ASCII: compare bytes, s's put in lower case.
	for i := 0; i+len(q) <= len(s); i++ {
		j := 0
		for j < len(q) && lowerASCII(s[i+j]) == q[j] {
			j++
		}
		if j == len(q) {
			return true
		}
	}
	return false
}

// lowerASCII is c in lower case, c an ASCII byte.
func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
