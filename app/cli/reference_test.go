package cli

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A synopsis is one way to call a command: its key (the words that name
// it, "servers add") and the flags it takes.
type synopsis struct {
	key   string
	flags []string
}

var (
	flagRE     = regexp.MustCompile(`--[a-z][a-z-]*`)
	wordRE     = regexp.MustCompile(`^[a-z][a-z-]*(\|[a-z][a-z-]*)*$`)
	codeSpanRE = regexp.MustCompile("`([^`]+)`")
)

// keyOf is the words that name a command in a synopsis: those before its
// first argument, placeholder or flag.
func keyOf(s string) string {
	var words []string
	for _, w := range strings.Fields(s) {
		if !wordRE.MatchString(w) {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// alternatives splits "sampling show [--json] | clear" into its
// synopses ("sampling show [--json]", "sampling clear"); "pause |
// resume", whose first is one word, into two commands.
func alternatives(s string) []string {
	parts := strings.Split(s, " | ")
	out := []string{strings.TrimSpace(parts[0])}
	first := strings.Fields(parts[0])[0]
	for _, p := range parts[1:] {
		p = strings.TrimSpace(p)
		if len(strings.Fields(parts[0])) == 1 || strings.HasPrefix(p, first+" ") {
			out = append(out, p)
		} else {
			out = append(out, first+" "+p)
		}
	}
	return out
}

// fromHelp reads the synopses of the usage text: each command line is
// indented by two spaces, and its synopsis ends where two spaces start
// its description.
func fromHelp() []synopsis {
	var out []synopsis
	for _, line := range strings.Split(usage, "\n") {
		if !strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "   ") {
			continue
		}
		syn, _, _ := strings.Cut(strings.TrimSpace(line), "  ")
		for _, alt := range alternatives(syn) {
			out = append(out, synopsis{key: keyOf(alt), flags: flagRE.FindAllString(alt, -1)})
		}
	}
	return out
}

// fromReference reads the synopses of docs/cli.md: the code spans in the
// first cell of each row of its table of commands.
func fromReference(t *testing.T) []synopsis {
	data, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []synopsis
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.ReplaceAll(line, `\|`, "\x00"), "|")
		for _, m := range codeSpanRE.FindAllStringSubmatch(cells[1], -1) {
			span := strings.ReplaceAll(m[1], "\x00", "|")
			span = strings.TrimPrefix(span, "rootkeeper ")
			if span == "rootkeeper" || strings.HasPrefix(span, "--") {
				continue // the window: no verb
			}
			out = append(out, synopsis{key: keyOf(span), flags: flagRE.FindAllString(span, -1)})
		}
	}
	return out
}

// flagsByKey gathers each key's flags over its synopses.
func flagsByKey(syns []synopsis) map[string][]string {
	out := map[string][]string{}
	for _, s := range syns {
		fl := append(out[s.key], s.flags...)
		slices.Sort(fl)
		out[s.key] = slices.Compact(fl)
	}
	return out
}

// TestReferenceMatchesHelp: docs/cli.md, the command line reference,
// names every command `help` names, with the same flags, and no other.
func TestReferenceMatchesHelp(t *testing.T) {
	help, ref := flagsByKey(fromHelp()), flagsByKey(fromReference(t))
	if len(help) < 30 {
		t.Fatalf("read only %d commands from the usage text: %v", len(help), help)
	}
	for key, flags := range help {
		got, ok := ref[key]
		if !ok {
			t.Errorf("docs/cli.md lacks %q (help: %v)", key, flags)
			continue
		}
		if !slices.Equal(got, flags) {
			t.Errorf("%q: help has flags %v, docs/cli.md %v", key, flags, got)
		}
	}
	for key := range ref {
		if _, ok := help[key]; !ok {
			t.Errorf("docs/cli.md has %q, which help does not name", key)
		}
	}
}
