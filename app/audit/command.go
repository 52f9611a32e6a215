package audit

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// UsageError is a bad flag or argument; the command exits 2 on it.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ExitCode is 2: bad usage.
func (e *UsageError) ExitCode() int { return 2 }

// RunCommand is `rootkeeper audit [--server S] [--json]`: it prints the audit
// log of stateDir to stdout, oldest first. Text output is one line per entry,
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

// FormatText renders e as one line of `rootkeeper audit` text output.
func FormatText(e Entry) string {
	var b strings.Builder
	b.WriteString(e.Time.Local().Format("2006-01-02T15:04:05.000Z07:00"))
	b.WriteByte(' ')
	b.WriteString(quoteIfNeeded(e.Server))
	b.WriteByte(' ')
	b.WriteString(orDash(e.ProtocolVersion))
	b.WriteByte(' ')
	b.WriteString(orDash(e.Via))
	switch {
	case e.Error != "":
		b.WriteString(" error: ")
		b.WriteString(e.Error)
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
