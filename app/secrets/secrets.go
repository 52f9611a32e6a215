package secrets

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zalando/go-keyring"

	"rootkeeper/app"
	"rootkeeper/app/secrets/spot"
)

// Service is the keyring service every Rootkeeper secret is filed under.
const Service = "rootkeeper"

// RefPrefix starts every reference the state file keeps instead of a
// secret.
const RefPrefix = "keyring:"

// Redacted stands for a secret value that is still in the state file (no
// keyring was reachable) wherever configurations are printed.
const Redacted = "(secret, kept in state.json)"

// The kinds of configured values a secret can be: an env variable's or a
// header's value, (part of) a command-line argument, a URL's query value.
const (
	KindEnv    = "env"
	KindHeader = "header"
	KindArg    = "arg"
	KindURL    = "url"
)

// Timeout bounds one keyring call: a locked keyring may ask the person for
// a password in a dialog nobody answers (headless, at login), and a save or
// a server's start must not wait on it forever.
var Timeout = 10 * time.Second

// Ref is the reference kept in the state file for server's env variable or
// header name.
func Ref(server, kind, name string) string {
	return RefPrefix + Service + "/" + user(server, kind, name)
}

func user(server, kind, name string) string { return server + "/" + kind + "/" + name }

// IsRef reports whether v is a keyring reference rather than a value.
func IsRef(v string) bool { return strings.HasPrefix(v, RefPrefix+Service+"/") }

// secretName matches the names of env variables and headers whose values are
// credentials, as the MCP servers' READMEs name them (GITHUB_PERSONAL_ACCESS_TOKEN,
// BRAVE_API_KEY, SLACK_BOT_TOKEN, DB_PASSWORD, Authorization, X-Api-Key, …).
var secretName = regexp.MustCompile(`(?i)(token|secret|passw(or)?d|passphrase|api[-_]?key|access[-_]?key|private[-_]?key|(^|[-_])key$|^key[-_]|credential|auth|cookie|session|(^|[-_])pat$)`)

// secretValue matches values that are credentials whatever they are called:
// the well-known token formats of the big providers (spot.Known, which
// arguments and URLs are checked against too).
var secretValue = spot.Known

// LooksSecret reports whether the value of env variable or header name
// should go to the keyring. Empty values, references and values that only
// name another variable (${VAR}, which the host or shell expands) are not
// secrets.
func LooksSecret(name, value string) bool {
	if value == "" || IsRef(value) || strings.Contains(value, "${") {
		return false
	}
	return secretName.MatchString(name) || secretValue.MatchString(value)
}

// Keyring is where secrets are kept: the OS keyring (OS) in the app, an
// in-memory one in tests of other packages.
type Keyring interface {
	Set(service, user, secret string) error
	Get(service, user string) (string, error)
	Delete(service, user string) error
}

// OS is the operating system's keyring, through go-keyring, each call
// bounded by Timeout.
var OS Keyring = osKeyring{}

type osKeyring struct{}

func (osKeyring) Set(service, user, secret string) error {
	_, err := bounded(func() (string, error) { return "", keyring.Set(service, user, secret) })
	return err
}

func (osKeyring) Get(service, user string) (string, error) {
	return bounded(func() (string, error) { return keyring.Get(service, user) })
}

func (osKeyring) Delete(service, user string) error {
	_, err := bounded(func() (string, error) { return "", keyring.Delete(service, user) })
	return err
}

// bounded runs fn once a session bus is known to be there (sessionBus),
// giving up after Timeout (fn goes on in the background and its answer is
// dropped).
func bounded(fn func() (string, error)) (string, error) {
	if err := sessionBus(); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	type result struct {
		v   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := fn()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		return "", fmt.Errorf("the keyring did not answer within %v (is it locked?)", Timeout)
	}
}

// ErrNotFound is returned by Resolve when a reference names a secret the
// keyring does not hold.
var ErrNotFound = keyring.ErrNotFound

// Available reports whether the keyring answers, by reading an entry that
// does not exist: "not found" is the healthy answer.
func Available(k Keyring) error {
	_, err := k.Get(Service, "probe/"+user("", "", "none"))
	if err == nil || errors.Is(err, keyring.ErrNotFound) {
		return nil
	}
	return err
}

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

// Seal moves every secret-looking env value and header of st's servers into
// the keyring and puts its reference in its place. A secret the keyring
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
		srv.Env = s.sealMap(k, srv.Name, KindEnv, srv.Env)
		srv.Headers = s.sealMap(k, srv.Name, KindHeader, srv.Headers)
		srv.Args = s.sealArgs(k, srv.Name, srv.Args)
		srv.URL = s.sealURL(k, srv.Name, srv.URL)
	}
}

// keep files one secret in the keyring as server's kind/name, unless the
// keyring failed a moment ago; it reports whether it did.
func (s *Sealer) keep(k Keyring, server, kind, name, secret string) bool {
	var err error
	if !s.down.IsZero() && time.Since(s.down) < retryAfter {
		err = errors.New("it did not answer a moment ago")
	} else if err = k.Set(Service, user(server, kind, name), secret); err != nil {
		s.down = time.Now()
	}
	if err != nil {
		s.warn(server, kind, name, err)
		return false
	}
	s.down = time.Time{}
	return true
}

// refNumbers are the numbers of server's references of kind in vals.
func refNumbers(server, kind string, vals ...string) map[int]bool {
	used := map[int]bool{}
	prefix := Ref(server, kind, "")
	for _, v := range vals {
		for rest := v; ; {
			i := strings.Index(rest, prefix)
			if i < 0 {
				break
			}
			rest = rest[i+len(prefix):]
			n, digits := leadingNumber(rest)
			if digits > 0 {
				used[n] = true
			}
		}
	}
	return used
}

// leadingNumber reads the decimal number s starts with.
func leadingNumber(s string) (n, digits int) {
	for digits < len(s) && digits < 6 && s[digits] >= '0' && s[digits] <= '9' {
		n = n*10 + int(s[digits]-'0')
		digits++
	}
	return n, digits
}

// sealArgs moves the secrets spot.Args finds in args into the keyring,
// each as server/arg/N, and puts its reference in its place (a flag's
// prefix such as --api-key= stays). The server still gets the secret on its
// command line when it starts, where other local users can read it in
// /proc/PID/cmdline: Warn says so.
func (s *Sealer) sealArgs(k Keyring, server string, args []string) []string {
	found := spot.Args(args)
	if len(found) == 0 {
		return args
	}
	used := refNumbers(server, KindArg, args...)
	args = slices.Clone(args) // may be shared with a snapshot
	next := 0
	for _, f := range found {
		for used[next] {
			next++
		}
		name := strconv.Itoa(next)
		if !s.keep(k, server, KindArg, name, f.Secret(args[f.Index])) {
			continue
		}
		used[next] = true
		args[f.Index] = f.Prefix + Ref(server, KindArg, name) + f.Suffix
		s.say(server, "cmdline/"+name, fmt.Sprintf("argument %d of server %q is a secret: it is kept in the keyring now, but the server still gets it on its command line, which other local users can read (/proc/PID/cmdline); give it in an environment variable instead if the server takes one", f.Index+1, server))
	}
	return args
}

// sealURL moves the secret query values of a remote server's URL into the
// keyring, each as server/url/N, and puts its reference in its place.
func (s *Sealer) sealURL(k Keyring, server, rawURL string) string {
	found := spot.Query(rawURL)
	if len(found) == 0 {
		return rawURL
	}
	used := refNumbers(server, KindURL, rawURL)
	next := 0
	out := rawURL
	for i := len(found) - 1; i >= 0; i-- { // from the end: earlier ranges stay put
		for used[next] {
			next++
		}
		name := strconv.Itoa(next)
		r := found[i]
		if !s.keep(k, server, KindURL, name, rawURL[r[0]:r[1]]) {
			continue
		}
		used[next] = true
		out = out[:r[0]] + Ref(server, KindURL, name) + out[r[1]:]
	}
	return out
}

func (s *Sealer) sealMap(k Keyring, server, kind string, m map[string]string) map[string]string {
	var names []string
	for name, v := range m {
		if LooksSecret(name, v) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return m
	}
	slices.Sort(names)
	// The map may be shared with a snapshot someone else holds.
	m = maps.Clone(m)
	for _, name := range names {
		if s.keep(k, server, kind, name, m[name]) {
			m[name] = Ref(server, kind, name)
		}
	}
	return m
}

func (s *Sealer) warn(server, kind, name string, err error) {
	what := fmt.Sprintf("%s %s", kind, name)
	switch kind {
	case KindArg:
		what = "secret argument"
	case KindURL:
		what = "secret in the URL"
	}
	s.say(server, kind+"/"+name, fmt.Sprintf("no keyring took the %s of server %q (%v); it stays in state.json, readable by you alone (mode 0600)", what, server, firstLine(err)))
}

// say tells Warn msg, once per server and key.
func (s *Sealer) say(server, key, msg string) {
	key = server + "/" + key
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

// Resolve is v itself, or the secret v refers to.
func Resolve(k Keyring, v string) (string, error) {
	if !IsRef(v) {
		return v, nil
	}
	if k == nil {
		k = OS
	}
	secret, err := k.Get(Service, strings.TrimPrefix(v, RefPrefix+Service+"/"))
	if err != nil {
		return "", fmt.Errorf("reading %s from the keyring: %w", v, err)
	}
	return secret, nil
}

// ResolveServer is srv with every reference in its env and headers
// replaced by its secret from the OS keyring: what a server is started
// with. srv's own maps are not changed.
func ResolveServer(srv app.Server) (app.Server, error) {
	var err error
	if srv.Env, err = resolveMap(srv.Env); err != nil {
		return srv, fmt.Errorf("server %q: %w", srv.Name, err)
	}
	if srv.Headers, err = resolveMap(srv.Headers); err != nil {
		return srv, fmt.Errorf("server %q: %w", srv.Name, err)
	}
	if len(refNumbers(srv.Name, KindArg, srv.Args...)) > 0 {
		args := slices.Clone(srv.Args)
		for i, a := range args {
			if args[i], err = resolveIn(srv.Name, KindArg, a); err != nil {
				return srv, fmt.Errorf("server %q: %w", srv.Name, err)
			}
		}
		srv.Args = args
	}
	if srv.URL, err = resolveIn(srv.Name, KindURL, srv.URL); err != nil {
		return srv, fmt.Errorf("server %q: %w", srv.Name, err)
	}
	return srv, nil
}

// resolveIn replaces every reference of server's kind in v by its secret.
func resolveIn(server, kind, v string) (string, error) {
	prefix := Ref(server, kind, "")
	if !strings.Contains(v, prefix) {
		return v, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(v, prefix)
		if i < 0 {
			b.WriteString(v)
			return b.String(), nil
		}
		_, digits := leadingNumber(v[i+len(prefix):])
		if digits == 0 {
			b.WriteString(v[:i+len(prefix)])
			v = v[i+len(prefix):]
			continue
		}
		ref := v[i : i+len(prefix)+digits]
		secret, err := Resolve(OS, ref)
		if err != nil {
			return "", err
		}
		b.WriteString(v[:i] + secret)
		v = v[i+len(ref):]
	}
}

func resolveMap(m map[string]string) (map[string]string, error) {
	if !slices.ContainsFunc(slices.Collect(maps.Values(m)), IsRef) {
		return m, nil
	}
	out := maps.Clone(m)
	for name, v := range m {
		secret, err := Resolve(OS, v)
		if err != nil {
			return nil, err
		}
		out[name] = secret
	}
	return out, nil
}

// Redact is srv as it may be printed: references stay (they are not
// secrets), secret-looking values still in the state file become Redacted.
func Redact(srv app.Server) app.Server {
	redact := func(m map[string]string) map[string]string {
		var out map[string]string
		for name, v := range m {
			if LooksSecret(name, v) {
				if out == nil {
					out = maps.Clone(m)
				}
				out[name] = Redacted
			}
		}
		if out == nil {
			return m
		}
		return out
	}
	srv.Env = redact(srv.Env)
	srv.Headers = redact(srv.Headers)
	srv.Args = spot.RedactArgs(srv.Args)
	srv.URL = spot.RedactURL(srv.URL)
	return srv
}

// Forget deletes every secret a server's references name, for a server
// that is removed. Missing entries are fine.
func Forget(k Keyring, srv app.Server) error {
	if k == nil {
		k = OS
	}
	var errs []error
	for kind, vals := range map[string][]string{KindArg: srv.Args, KindURL: {srv.URL}} {
		for n := range refNumbers(srv.Name, kind, vals...) {
			err := k.Delete(Service, user(srv.Name, kind, strconv.Itoa(n)))
			if err != nil && !errors.Is(err, keyring.ErrNotFound) {
				errs = append(errs, err)
			}
		}
	}
	for _, m := range []map[string]string{srv.Env, srv.Headers} {
		for _, v := range m {
			if !IsRef(v) {
				continue
			}
			err := k.Delete(Service, strings.TrimPrefix(v, RefPrefix+Service+"/"))
			if err != nil && !errors.Is(err, keyring.ErrNotFound) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
