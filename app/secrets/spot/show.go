package spot

import (
	"maps"
	"slices"
	"strings"
)

// Redacted stands for a secret, or a reference to one, wherever a
// configuration is shown.
const Redacted = "(secret)"

// WithRefs is what of v is hidden where a configuration of server is
// shown: the secrets found in it and the references to server's secrets.
func WithRefs(server, v string, secrets []Span) []Span {
	refs := FindRefs(server, v)
	if len(refs) == 0 {
		return secrets
	}
	sp := slices.Clone(secrets)
	for _, r := range refs {
		sp = append(sp, Span{Start: r.Start, End: r.End})
	}
	return clean(v, sp)
}

// HiddenInArgs is what of server's arguments is hidden when they are shown:
// their secrets and the references to server's secrets, one entry per
// argument.
func HiddenInArgs(server string, args []string) [][]Span {
	found := InArgs(args)
	for i, a := range args {
		found[i] = WithRefs(server, a, found[i])
	}
	return found
}

// HiddenInEnv is what of the value of server's env variable name is hidden.
func HiddenInEnv(server, name, v string) []Span { return WithRefs(server, v, InEnv(name, v)) }

// HiddenInHeader is what of the value of server's header name is hidden.
func HiddenInHeader(server, name, v string) []Span { return WithRefs(server, v, InHeader(name, v)) }

// HiddenInURL is what of server's URL is hidden.
func HiddenInURL(server, u string) []Span { return WithRefs(server, u, InURL(u)) }

// Replace is v with each span replaced by with.
func Replace(v string, spans []Span, with string) string {
	if len(spans) == 0 {
		return v
	}
	var b strings.Builder
	last := 0
	for _, s := range spans {
		b.WriteString(v[last:s.Start])
		b.WriteString(with)
		last = s.End
	}
	b.WriteString(v[last:])
	return b.String()
}

// Parts are the spans' texts in v, in order.
func Parts(v string, spans []Span) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = v[s.Start:s.End]
	}
	return out
}

// ShowArgs is server's arguments as they may be shown: every secret and
// every reference is Redacted (args itself is not changed).
func ShowArgs(server string, args []string) []string {
	sp := HiddenInArgs(server, args)
	var out []string
	for i, a := range args {
		if len(sp[i]) == 0 {
			continue
		}
		if out == nil {
			out = slices.Clone(args)
		}
		out[i] = Replace(a, sp[i], Redacted)
	}
	if out == nil {
		return args
	}
	return out
}

// ShowURL is server's URL as it may be shown.
func ShowURL(server, u string) string { return Replace(u, HiddenInURL(server, u), Redacted) }

// ShowEnv is server's env as it may be shown (m itself is not changed).
func ShowEnv(server string, m map[string]string) map[string]string {
	return showMap(m, func(k, v string) []Span { return HiddenInEnv(server, k, v) })
}

// ShowHeaders is server's headers as they may be shown.
func ShowHeaders(server string, m map[string]string) map[string]string {
	return showMap(m, func(k, v string) []Span { return HiddenInHeader(server, k, v) })
}

func showMap(m map[string]string, find func(k, v string) []Span) map[string]string {
	var out map[string]string
	for k, v := range m {
		if sp := find(k, v); len(sp) > 0 {
			if out == nil {
				out = maps.Clone(m)
			}
			out[k] = Replace(v, sp, Redacted)
		}
	}
	if out == nil {
		return m
	}
	return out
}
