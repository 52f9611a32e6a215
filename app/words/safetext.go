package words

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SafeText makes text that Rootkeeper did not write (a server's name or
// version, a line of its stderr, a resource's name, a folder's name) safe to
// print on one line of a terminal or put in a label: newlines, tabs and
// other control characters are escaped (`\n`, `\t`, `\x1b`), so they cannot
// forge lines or drive the terminal; bidirectional overrides, zero-width and
// other invisible formatting characters are escaped (`\u202e`), so text
// cannot hide or reorder what stands beside it; invalid UTF-8 becomes `\xff`.
// Everything else, non-ASCII letters included, is kept.
func SafeText(s string) string { return safeText(s, false) }

// SafeLines is SafeText for text meant to span lines, such as a resource's
// contents: newlines and tabs are kept, everything else is neutralised.
func SafeLines(s string) string { return safeText(s, true) }

func safeText(s string, keepLines bool) string {
	if isPlain(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
			i++
			continue
		}
		i += size
		if keepLines && (r == '\n' || r == '\t') || !writeEscape(&b, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// UnsafeRune reports whether r must not reach a terminal or a label as it
// is: control characters (C0, DEL, C1), format characters (category Cf:
// bidi embeddings, overrides and isolates, zero-width spaces and joiners,
// the BOM, soft hyphen), line and paragraph separators, and private-use or
// unassigned code points that render as nothing predictable.
func UnsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co) ||
		r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' && !unicode.IsSpace(r)
}

// isPlain is the fast path: printable ASCII only (and newlines and tabs
// when they are kept).
func isPlain(s string, keepLines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			continue
		}
		if keepLines && (c == '\n' || c == '\t') {
			continue
		}
		return false
	}
	return true
}

// HasUnsafeText reports whether SafeText would change s (other than for
// newlines and tabs when keepLines).
func HasUnsafeText(s string) bool { return safeText(s, false) != s }

// ShellQuote quotes s for a POSIX shell (bash, zsh, dash), so that a command
// hint Rootkeeper prints can be pasted as it is and runs with s as one
// argument, whatever s holds: `$(...)`, quotes, spaces, newlines. Text with
// control or invisible characters is written in bash/zsh's $'...' form with
// escapes, so the hint stays on one line and shows what is really there.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	plain := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("@%+=:,./_-", c) >= 0) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	if !HasUnsafeText(s) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case !writeEscape(&b, r):
			b.WriteRune(r)
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}

// writeEscape writes the escape of r if r must not appear as it is (a
// newline, tab or carriage return, or what UnsafeRune names) and reports
// whether it did. The escapes are those of Go and of bash's $'...'.
func writeEscape(b *strings.Builder, r rune) bool {
	switch {
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\r':
		b.WriteString(`\r`)
	case r == '\t':
		b.WriteString(`\t`)
	case r < 0x80 && UnsafeRune(r):
		fmt.Fprintf(b, `\x%02x`, r)
	case UnsafeRune(r):
		writeRuneEscape(b, r)
	default:
		return false
	}
	return true
}

// writeRuneEscape writes r as \uXXXX, or \UXXXXXXXX beyond the BMP (the
// forms Go, JSON-ish readers and bash's $'...' all understand).
func writeRuneEscape(b *strings.Builder, r rune) {
	if r > 0xffff {
		fmt.Fprintf(b, `\U%08x`, r)
		return
	}
	fmt.Fprintf(b, `\u%04x`, r)
}
