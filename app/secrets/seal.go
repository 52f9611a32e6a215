package secrets

import (
	"errors"
	"fmt"
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
		s.sealServer(k, &st.Servers[i])
	}
}

// sealServer seals the secrets of each field of srv that holds some.
func (s *Sealer) sealServer(k Keyring, srv *app.Server) {
	server := srv.Name
	argPrefix := partPrefix(server, KindArg, "")
	usedArgs := numbers(server, argPrefix, srv.Args...)
	app.EachSecretField(srv, func(f app.SecretField) string {
		if len(f.Found) == 0 {
			return f.Value
		}
		switch f.Kind {
		case KindArg:
			return s.sealArg(k, server, f, argPrefix, usedArgs)
		case KindURL:
			prefix := partPrefix(server, KindURL, "")
			return s.sealSpans(k, server, prefix, "secret in the URL", f.Value, f.Found, numbers(server, prefix, f.Value))
		}
		return s.sealNamed(k, server, f)
	})
}

// partPrefix is the keyring user of the parts of a value of kind (and
// name) less their number: "SERVER/arg/".
func partPrefix(server, kind, name string) string {
	p := spot.PartUser(server, kind, name, 0)
	return p[:len(p)-1]
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

// sealArg moves the secrets spot finds in an argument into the keyring,
// each as server/arg/N (a number not in used), and puts its reference in
// its place (a flag's prefix such as --api-key= and a header's name stay).
// The server still gets the secret on its command line when it starts,
// where other local users can read it in /proc/PID/cmdline: Warn says so.
func (s *Sealer) sealArg(k Keyring, server string, f app.SecretField, prefix string, used map[int]bool) string {
	n := strconv.Itoa(f.Index + 1)
	sealed := s.sealSpans(k, server, prefix, "secret in argument "+n, f.Value, f.Found, used)
	if sealed != f.Value {
		s.say(server+"/cmdline/"+strconv.Itoa(f.Index), fmt.Sprintf("argument %s of server %q holds a secret: it is kept in the keyring now, but the server still gets it on its command line, which other local users can read (/proc/PID/cmdline); give it in an environment variable instead if the server takes one", n, server))
	}
	return sealed
}

// sealNamed seals an env variable's or a header's value: one that is a
// secret as a whole becomes the reference
// "keyring:rootkeeper/SERVER/env/NAME"; the secret parts of one that is
// not ("Bearer X", a URL's password, a connection string's Password=X)
// each become SERVER/env/NAME/N.
func (s *Sealer) sealNamed(k Keyring, server string, f app.SecretField) string {
	v, sp := f.Value, f.Found
	what := f.Kind + " " + f.Name
	if len(sp) == 1 && sp[0].Start == 0 && sp[0].End == len(v) {
		user := spot.WholeUser(server, f.Kind, f.Name)
		if s.keep(k, server, user, what, v) {
			return spot.RefText(user, false)
		}
		return v
	}
	prefix := partPrefix(server, f.Kind, f.Name)
	return s.sealSpans(k, server, prefix, what, v, sp, numbers(server, prefix, v))
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
