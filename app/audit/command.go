package audit

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// UsageError is a bad flag or argument; the command exits 2 on it.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ExitCode is 2: bad usage.
func (e *UsageError) ExitCode() int { return 2 }

// RunCommand is `rootkeeper audit [--server S] [--json]`: it prints the audit
// log of stateDir to stdout, trail and noise merged, oldest first. Text
// output is one line per entry (FormatText),
//
//	TIME SERVER VERSION VIA uri1 uri2 …
//
// with "error: MESSAGE" in place of the URIs for a refused request, "(none)"
// for an empty list and "-" for an unknown version; a server name holding
// spaces or quotes is quoted. --json prints one Entry object per line.
func RunCommand(args []string, stateDir string, stdout io.Writer) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	server := fs.String("server", "", "only entries for this server")
	asJSON := fs.Bool("json", false, "print JSON lines")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return &UsageError{Msg: "usage: rootkeeper audit [--server NAME] [--json]"}
		}
		return &UsageError{Msg: "audit: " + err.Error()}
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: fmt.Sprintf("audit: unexpected argument %q (usage: rootkeeper audit [--server NAME] [--json])", fs.Arg(0))}
	}
	serverSet := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "server" {
			serverSet = true
		}
	})
	if serverSet && strings.TrimSpace(*server) == "" {
		return &UsageError{Msg: fmt.Sprintf("audit: invalid --server %q (want a server name)", *server)}
	}
	entries, err := Read(stateDir, *server)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, e := range entries {
			if e.Roots == nil && e.Error == "" {
				e.Roots = []string{}
			}
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	}
	for _, e := range entries {
		if _, err := io.WriteString(stdout, FormatText(e)+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// FormatText renders e as one line of `rootkeeper audit` text output:
//
//	TIME SERVER VERSION VIA uri1 uri2 …                 an answer
//	TIME SERVER - reach FOLDER tried OP PATH: DECIDED    an attempt
//	TIME SERVER - network tried to OP DEST: DECIDED      a contact
//	TIME SERVER - confinement DECIDED (by SOURCE)        a decision
//	TIME SERVER - summary N not written since TIME: …    noise counted
func FormatText(e Entry) string {
	var b strings.Builder
	b.WriteString(e.Time.Local().Format(timeFormat))
	b.WriteByte(' ')
	b.WriteString(quoteIfNeeded(e.Server))
	b.WriteByte(' ')
	b.WriteString(orDash(e.ProtocolVersion))
	b.WriteByte(' ')
	b.WriteString(orDash(e.Via))
	switch {
	case e.Via == ViaSummary:
		b.WriteString(" " + SummaryText(e))
		return b.String()
	case e.Via == ViaConfinement:
		fmt.Fprintf(&b, " %s (by %s)", orDash(e.Decided), orDash(e.Op))
		return b.String()
	case e.Error != "":
		b.WriteString(" error: ")
		b.WriteString(e.Error)
	case e.Via == ViaNetwork && IsNetworkDecision(e):
		fmt.Fprintf(&b, " %s %s (by %s)", e.Decided, quoteIfNeeded(e.Tried), orDash(e.Op))
	case e.Via == ViaNetwork:
		fmt.Fprintf(&b, " tried to %s %s: %s", orDash(e.Op), quoteIfNeeded(e.Tried), orDash(e.Decided))
		if e.Request {
			b.WriteString(" (new request)")
		}
	case e.Via == ViaReach:
		for _, u := range e.Roots {
			b.WriteByte(' ')
			b.WriteString(u)
		}
		fmt.Fprintf(&b, " tried %s %s: %s", orDash(e.Op), quoteIfNeeded(e.Tried), orDash(e.Decided))
		if e.Request {
			b.WriteString(" (new request)")
		}
		if e.Absent {
			b.WriteString(" (not there)")
		}
	case len(e.Roots) == 0:
		b.WriteString(" (none)")
	default:
		for _, u := range e.Roots {
			b.WriteByte(' ')
			b.WriteString(u)
		}
	}
	if e.Repeated > 1 {
		fmt.Fprintf(&b, " (×%d since the line before)", e.Repeated)
	}
	return b.String()
}

const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// SummaryText says what a summary counted: "1,234,567 not written since
// TIME: 1,234,000 not asked, 567 rate-limited; e.g. read /x/y", the
// largest count first.
func SummaryText(e Entry) string {
	whats := slices.Collect(maps.Keys(e.Unwritten))
	slices.SortFunc(whats, func(a, b string) int {
		return cmp.Or(cmp.Compare(e.Unwritten[b], e.Unwritten[a]), strings.Compare(a, b))
	})
	total := 0
	parts := make([]string, len(whats))
	for i, w := range whats {
		total += e.Unwritten[w]
		parts[i] = thousands(e.Unwritten[w]) + " " + w
	}
	s := fmt.Sprintf("%s not written since %s: %s", thousands(total), e.Since.Local().Format(timeFormat), strings.Join(parts, ", "))
	if e.Tried != "" {
		s += fmt.Sprintf("; e.g. %s %s", orDash(e.Op), quoteIfNeeded(e.Tried))
	}
	return s
}

// thousands is n with its thousands separated by commas: 1,234,567.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\"'\\") || !strconv.CanBackquote(s) {
		return strconv.Quote(s)
	}
	return s
}
