package app

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"rootkeeper/app/secrets/spot"
)

// Hidden is what an editor of a server's configuration does not show: the
// secrets in it and the references to the keyring, field by field, to be
// put back where the editor shows "(secret)".
type Hidden struct {
	args    [][]string // per argument
	shown   []string   // the arguments as shown
	env     map[string][]string
	headers map[string][]string
	url     []string
}

// ForEditing is srv as an editor shows it — each secret and each reference
// to one is spot.Redacted, the rest as it is — and what it hides.
func ForEditing(srv Server) (Server, Hidden) {
	var h Hidden
	args := slices.Clone(srv.Args)
	for i, sp := range spot.HiddenInArgs(srv.Name, srv.Args) {
		h.args = append(h.args, spot.Parts(srv.Args[i], sp))
		args[i] = spot.Replace(srv.Args[i], sp, spot.Redacted)
	}
	h.shown = args
	srv.Args = args
	srv.Env, h.env = hideMap(srv.Env, func(k, v string) []spot.Span { return spot.HiddenInEnv(srv.Name, k, v) })
	srv.Headers, h.headers = hideMap(srv.Headers, func(k, v string) []spot.Span { return spot.HiddenInHeader(srv.Name, k, v) })
	sp := spot.HiddenInURL(srv.Name, srv.URL)
	h.url = spot.Parts(srv.URL, sp)
	srv.URL = spot.Replace(srv.URL, sp, spot.Redacted)
	return srv, h
}

func hideMap(m map[string]string, find func(k, v string) []spot.Span) (map[string]string, map[string][]string) {
	if m == nil {
		return nil, nil
	}
	out := maps.Clone(m)
	parts := map[string][]string{}
	for k, v := range m {
		if sp := find(k, v); len(sp) > 0 {
			parts[k] = spot.Parts(v, sp)
			out[k] = spot.Replace(v, sp, spot.Redacted)
		}
	}
	return out, parts
}

// PutBack is edited, a server ForEditing showed and a person changed, with
// each "(secret)" replaced by what it stood for: in the same argument
// (found by its text, or else its place), the same variable or header, the
// URL; in order. A "(secret)" that stands for nothing (typed anew, or in a
// value that had fewer) is an error naming where it is: a secret is typed
// in clear, never made up.
func (h Hidden) PutBack(edited Server) (Server, error) {
	if slices.ContainsFunc(edited.Args, hasRedacted) {
		args := slices.Clone(edited.Args)
		used := make([]bool, len(h.args))
		for i, a := range args {
			if !hasRedacted(a) {
				continue
			}
			j := h.argFor(a, used)
			if j < 0 {
				return edited, inputErrorf("argument %d: %s stands for a value Rootkeeper keeps hidden, and there is none here; type the value itself", i+1, spot.Redacted)
			}
			used[j] = true
			args[i] = putBack(a, h.args[j])
		}
		edited.Args = args
	}
	var err error
	if edited.Env, err = putBackMap("environment variable", edited.Env, h.env); err != nil {
		return edited, err
	}
	if edited.Headers, err = putBackMap("header", edited.Headers, h.headers); err != nil {
		return edited, err
	}
	if hasRedacted(edited.URL) {
		if strings.Count(edited.URL, spot.Redacted) != len(h.url) {
			return edited, inputErrorf("url: %s stands for a value Rootkeeper keeps hidden, and the URL had %d; type the value itself", spot.Redacted, len(h.url))
		}
		edited.URL = putBack(edited.URL, h.url)
	}
	return edited, nil
}

// argFor finds the argument, not used yet, that the edited argument a was
// shown as: the same text, or else the same number of secrets and the same
// text before the first (an edited URL, "postgres://u:(secret)@other/db").
func (h Hidden) argFor(a string, used []bool) int {
	for j, s := range h.shown {
		if !used[j] && s == a {
			return j
		}
	}
	n := strings.Count(a, spot.Redacted)
	lead, _, _ := strings.Cut(a, spot.Redacted)
	for j, s := range h.shown {
		if l, _, _ := strings.Cut(s, spot.Redacted); !used[j] && len(h.args[j]) == n && l == lead {
			return j
		}
	}
	return -1
}

func hasRedacted(s string) bool { return strings.Contains(s, spot.Redacted) }

// putBack replaces the Redacted in s by parts, in order (as many of each).
func putBack(s string, parts []string) string {
	var b strings.Builder
	for _, p := range parts {
		i := strings.Index(s, spot.Redacted)
		if i < 0 {
			break
		}
		b.WriteString(s[:i] + p)
		s = s[i+len(spot.Redacted):]
	}
	b.WriteString(s)
	return b.String()
}

func putBackMap(what string, m map[string]string, hidden map[string][]string) (map[string]string, error) {
	var out map[string]string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if !hasRedacted(v) {
			continue
		}
		if strings.Count(v, spot.Redacted) != len(hidden[k]) {
			return m, &InputError{Msg: fmt.Sprintf("%s %s: %s stands for a value Rootkeeper keeps hidden, and there is none here; type the value itself", what, k, spot.Redacted)}
		}
		if out == nil {
			out = maps.Clone(m)
		}
		out[k] = putBack(v, hidden[k])
	}
	if out == nil {
		return m, nil
	}
	return out, nil
}
