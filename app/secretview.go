package app

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
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
	srv.Args = slices.Clone(srv.Args) // the editor's own
	EachSecretField(&srv, func(f SecretField) string {
		sp := f.Hidden(srv.Name)
		parts := spot.Parts(f.Value, sp)
		switch f.Kind {
		case spot.KindArg:
			h.args = append(h.args, parts) // one per argument
		case spot.KindEnv:
			h.env = addParts(h.env, f.Name, parts)
		case spot.KindHeader:
			h.headers = addParts(h.headers, f.Name, parts)
		case spot.KindURL:
			h.url = parts
		}
		return spot.Replace(f.Value, sp, spot.Redacted)
	})
	h.shown = srv.Args
	return srv, h
}

// addParts is m with name's hidden parts, if it has any.
func addParts(m map[string][]string, name string, parts []string) map[string][]string {
	if len(parts) == 0 {
		return m
	}
	if m == nil {
		m = map[string][]string{}
	}
	m[name] = parts
	return m
}

// A SecretField is one value of a server's configuration that may hold a
// secret: an argument, an env variable's value, a header's value, the
// URL.
type SecretField struct {
	// Kind is spot.KindArg, spot.KindEnv, spot.KindHeader or spot.KindURL.
	Kind string
	// Name is the env variable's or the header's name ("" otherwise).
	Name string
	// Index is the argument's place, from 0 (0 otherwise).
	Index int
	// Value is the value as stored: secrets in clear, references to those
	// in the keyring, or neither.
	Value string
	// Found are the secrets spot finds in Value in clear; an argument's
	// are read with the arguments before it (the value of --api-key).
	Found []spot.Span
}

// Where names the field as a person reads it: "argument 3", "env NAME",
// "header NAME" or "URL".
func (f SecretField) Where() string {
	switch f.Kind {
	case spot.KindArg:
		return "argument " + strconv.Itoa(f.Index+1)
	case spot.KindURL:
		return "URL"
	}
	return f.Kind + " " + f.Name
}

// Hidden is what of the value is not shown of server's configuration: the
// secrets in clear and the references to server's secrets in the keyring.
func (f SecretField) Hidden(server string) []spot.Span {
	return spot.WithRefs(server, f.Value, f.Found)
}

// EachSecretField is the one list of where a server keeps secrets: it
// calls visit with each argument, each env value and each header value
// (in name order) and the URL of srv, and stores what visit returns in
// that place (visit returns f.Value to leave it as it is). Whatever seals,
// resolves, redacts, shows or says where a server's secrets are walks
// this, so that a field that comes to hold secrets is added here alone
// (TestEachSecretFieldVisitsEveryField fails until it is). srv's slice and
// maps are copied before its first change, as a snapshot may share them.
func EachSecretField(srv *Server, visit func(f SecretField) string) {
	cloned := false
	for i, found := range spot.InArgs(srv.Args) {
		v := srv.Args[i]
		if nv := visit(SecretField{Kind: spot.KindArg, Index: i, Value: v, Found: found}); nv != v {
			if !cloned {
				srv.Args, cloned = slices.Clone(srv.Args), true
			}
			srv.Args[i] = nv
		}
	}
	srv.Env = eachInMap(srv.Env, spot.KindEnv, spot.InEnv, visit)
	srv.Headers = eachInMap(srv.Headers, spot.KindHeader, spot.InHeader, visit)
	srv.URL = visit(SecretField{Kind: spot.KindURL, Value: srv.URL, Found: spot.InURL(srv.URL)})
}

// eachInMap visits the values of m, an env or the headers, in name order,
// and returns m with what visit returned (a copy of m if anything
// changed).
func eachInMap(m map[string]string, kind string, find func(name, v string) []spot.Span, visit func(SecretField) string) map[string]string {
	out, copied := m, false
	for _, name := range slices.Sorted(maps.Keys(m)) {
		v := m[name]
		if nv := visit(SecretField{Kind: kind, Name: name, Value: v, Found: find(name, v)}); nv != v {
			if !copied {
				out, copied = maps.Clone(m), true
			}
			out[name] = nv
		}
	}
	return out
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
