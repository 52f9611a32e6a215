package words

import (
	"os/exec"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSafeText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain name-1.2", "plain name-1.2"},
		{"café 日本", "café 日本"},
		{"two\nlines", `two\nlines`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"tab\there\r", `tab\there\r`},
		{"evil\u202eexe.txt", `evil\u202eexe.txt`},
		{"zero\u200bwidth\ufeff", `zero\u200bwidth\ufeff`},
		{"iso\u2066late\u2069", `iso\u2066late\u2069`},
		{"c1\u009bcsi", `c1\u009bcsi`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"line\u2028sep", `line\u2028sep`},
		{"tag\U000e0041", `tag\U000e0041`},
	} {
		if got := SafeText(tc.in); got != tc.want {
			t.Errorf("SafeText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := SafeLines("a\n\tb\x1b[2Jc\u202e"); got != "a\n\tb\\x1b[2Jc\\u202e" {
		t.Errorf("SafeLines kept or lost the wrong things: %q", got)
	}
}

// What SafeText returns can never drive a terminal or hide text, whatever
// it was given, and text that needed nothing is returned as it was.
func FuzzSafeText(f *testing.F) {
	for _, s := range []string{"", "ok", "a\nb", "\x1b]0;title\x07", "\u202e", "\xff\xfe", "x\u0085y", "日本\u200d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := SafeText(s)
		if !utf8.ValidString(out) {
			t.Fatalf("SafeText(%q) = %q is not valid UTF-8", s, out)
		}
		for _, r := range out {
			if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) {
				t.Fatalf("SafeText(%q) = %q still holds %U", s, out, r)
			}
		}
		if SafeText(out) != out {
			t.Fatalf("SafeText is not idempotent on %q", s)
		}
		if !HasUnsafeText(s) && out != s {
			t.Fatalf("safe text %q was changed to %q", s, out)
		}
		lines := SafeLines(s)
		for _, r := range lines {
			if r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)) {
				t.Fatalf("SafeLines(%q) = %q still holds %U", s, lines, r)
			}
		}
	})
}

// A shell-quoted word, pasted into a shell, is exactly one argument equal
// to the original, and runs nothing.
func TestShellQuoteRoundTripsThroughBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed to check the quoting")
	}
	words := []string{"plain", "", "with space", "$(touch /tmp/rootkeeper-pwned)", "`id`", "it's", `back\slash`,
		"new\nline", "\x1b[2J", "bidi\u202e", "日本語", "-dash", "a'b\"c$d", "~/x", "*"}
	var script strings.Builder
	for _, w := range words {
		script.WriteString("printf '%s\\0' " + ShellQuote(w) + "\n")
	}
	out, err := exec.Command(bash, "-c", script.String()).Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(got) != len(words) {
		t.Fatalf("bash printed %d words, want %d: %q", len(got), len(words), got)
	}
	for i, w := range words {
		if got[i] != w {
			t.Errorf("ShellQuote(%q) = %s came back as %q", w, ShellQuote(w), got[i])
		}
		if q := ShellQuote(w); strings.ContainsAny(q, "\n\r\x1b") || HasUnsafeText(q) {
			t.Errorf("ShellQuote(%q) = %q is not one safe line", w, q)
		}
	}
}
