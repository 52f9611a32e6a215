package secrets

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/secrets/spot"
)

// Sealer moves secrets from servers' configurations into a keyring before
// the state is saved (it is the Store's BeforeSave).
type Sealer struct {
	// Keyring receives the secrets (OS when nil).
	Keyring Keyring
	// Warn is told, once per secret, that no keyring took it and it stays
	// in the state file. Nil: nobody is told.
	Warn func(msg string)

	mu     sync.Mutex
	down   time.Time // when the keyring last failed: it is left alone a while
	warned map[string]bool
}

// retryAfter is how long a keyring that failed is left alone, so that a
// machine without one does not pay a D-Bus round trip on every save.
const retryAfter = 30 * time.Second

// Seal moves the secrets spot finds in st's servers — in their env values,
// headers, arguments and URLs — into the keyring and puts a reference in
// the place of each: only the secret part of a value goes
// ("Bearer keyring:rootkeeper/…", "postgres://user:keyring%3A…@host/db"),
// so that the configuration still reads as it did. A secret the keyring
// does not take stays where it is, and Warn says so.
func (s *Sealer) Seal(st *app.State) {
	k := s.Keyring
	if k == nil {
		k = OS
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range st.Servers {
		srv := &st.Servers[i]
		srv.Env = s.sealMap(k, srv.Name, KindEnv, srv.Env, spot.InEnv)
		srv.Headers = s.sealMap(k, srv.Name, KindHeader, srv.Headers, spot.InHeader)
		srv.Args = s.sealArgs(k, srv.Name, srv.Args)
		srv.URL = s.sealURL(k, srv.Name, srv.URL)
	}
}

// keep files one secret in the keyring as user, unless the keyring failed a
// moment ago; it reports whether it did. what names the secret for a
// warning.
func (s *Sealer) keep(k Keyring, server, user, what, secret string) bool {
	var err error
	if !s.down.IsZero() && time.Since(s.down) < retryAfter {
		err = errors.New("it did not answer a moment ago")
	} else if err = k.Set(Service, user, secret); err != nil {
		s.down = time.Now()
	}
	if err != nil {
		s.say(user, fmt.Sprintf("no keyring took the %s of server %q (%v); it stays in state.json, readable by you alone (mode 0600)", what, server, firstLine(err)))
		return false
	}
	s.down = time.Time{}
	return true
}

// numbers are the numbers of the references to users starting with prefix
// in vals (server/arg/, server/url/, server/env/NAME/).
func numbers(server, prefix string, vals ...string) map[int]bool {
	used := map[int]bool{}
	for _, v := range vals {
		for _, r := range spot.FindRefs(server, v) {
			if rest, ok := strings.CutPrefix(r.User, prefix); ok {
				if n, err := strconv.Atoi(rest); err == nil {
					used[n] = true
				}
			}
		}
	}
	return used
}

// sealer's part: the secret spans of one value and what stands for each.
type part struct {
	span spot.Span
	ref  string
}

// rebuild is v with each part's span replaced by its reference.
func rebuild(v string, parts []part) string {
	var b strings.Builder
	last := 0
	for _, p := range parts {
		b.WriteString(v[last:p.span.Start])
		b.WriteString(p.ref)
		last = p.span.End
	}
	b.WriteString(v[last:])
	return b.String()
}

// sealSpans files the spans of v (numbered from the first free number of
// used on, each as prefix+N) and returns v with their references.
func (s *Sealer) sealSpans(k Keyring, server, prefix, what, v string, spans []spot.Span, used map[int]bool) string {
	var parts []part
	next := 0
	for _, sp := range spans {
		for used[next] {
			next++
		}
		user := prefix + strconv.Itoa(next)
		// The number is taken either way: a secret that stays in clear
		// gets the same one on the next save, and is warned about once.
		used[next] = true
		if !s.keep(k, server, user, what, v[sp.Start:sp.End]) {
			continue
		}
		parts = append(parts, part{sp, spot.RefText(user, sp.InURL)})
	}
	if len(parts) == 0 {
		return v
	}
	return rebuild(v, parts)
}

// sealArgs moves the secrets spot finds on a command line into the
// keyring, each as server/arg/N, and puts its reference in its place (a
// flag's prefix such as --api-key= and a header's name stay). The server
// still gets the secret on its command line when it starts, where other
// local users can read it in /proc/PID/cmdline: Warn says so.
func (s *Sealer) sealArgs(k Keyring, server string, args []string) []string {
	found := spot.InArgs(args)
	if !slices.ContainsFunc(found, func(sp []spot.Span) bool { return len(sp) > 0 }) {
		return args
	}
	prefix := spot.PartUser(server, KindArg, "", 0)
	prefix = prefix[:len(prefix)-1]
	used := numbers(server, prefix, args...)
	args = slices.Clone(args) // may be shared with a snapshot
	for i, sp := range found {
		if len(sp) == 0 {
			continue
		}
		sealed := s.sealSpans(k, server, prefix, "secret in argument "+strconv.Itoa(i+1), args[i], sp, used)
		if sealed != args[i] {
			args[i] = sealed
			s.say(server+"/cmdline/"+strconv.Itoa(i), fmt.Sprintf("argument %d of server %q holds a secret: it is kept in the keyring now, but the server still gets it on its command line, which other local users can read (/proc/PID/cmdline); give it in an environment variable instead if the server takes one", i+1, server))
		}
	}
	return args
}

// sealURL moves the secrets of a remote server's URL (its userinfo's
// password, tokens in its path, secret query values) into the keyring,
// each as server/url/N, and puts its reference in its place (percent-encoded
// in the userinfo and the path, so that the URL keeps its host).
func (s *Sealer) sealURL(k Keyring, server, rawURL string) string {
	found := spot.InURL(rawURL)
	if len(found) == 0 {
		return rawURL
	}
	prefix := spot.PartUser(server, KindURL, "", 0)
	prefix = prefix[:len(prefix)-1]
	return s.sealSpans(k, server, prefix, "secret in the URL", rawURL, found, numbers(server, prefix, rawURL))
}

// sealMap seals the env variables or headers of m: a value that is a
// secret as a whole becomes the reference "keyring:rootkeeper/SERVER/env/NAME";
// the secret parts of one that is not ("Bearer X", a URL's password, a
// connection string's Password=X) each become SERVER/env/NAME/N.
func (s *Sealer) sealMap(k Keyring, server, kind string, m map[string]string, find func(name, v string) []spot.Span) map[string]string {
	var names []string
	found := map[string][]spot.Span{}
	for name, v := range m {
		if sp := find(name, v); len(sp) > 0 {
			names = append(names, name)
			found[name] = sp
		}
	}
	if len(names) == 0 {
		return m
	}
	slices.Sort(names)
	// The map may be shared with a snapshot someone else holds.
	m = maps.Clone(m)
	for _, name := range names {
		v, sp := m[name], found[name]
		what := kind + " " + name
		if len(sp) == 1 && sp[0].Start == 0 && sp[0].End == len(v) {
			user := spot.WholeUser(server, kind, name)
			if s.keep(k, server, user, what, v) {
				m[name] = spot.RefText(user, false)
			}
			continue
		}
		prefix := spot.PartUser(server, kind, name, 0)
		prefix = prefix[:len(prefix)-1]
		m[name] = s.sealSpans(k, server, prefix, what, v, sp, numbers(server, prefix, v))
	}
	return m
}

// say tells Warn msg, once per key.
func (s *Sealer) say(key, msg string) {
	if s.Warn == nil || s.warned[key] {
		return
	}
	if s.warned == nil {
		s.warned = map[string]bool{}
	}
	s.warned[key] = true
	s.Warn(msg)
}

func firstLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}
