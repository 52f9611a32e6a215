package secrets

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/zalando/go-keyring"

	"rootkeeper/app"
	"rootkeeper/app/secrets/spot"
)

// ResolveHiding is srv with every reference to its secrets replaced by the
// secret from the OS keyring, in the place it was sealed from (an env
// value, a header, an argument, the URL), byte for byte: what a server is
// started with; srv's own maps and slices are not changed. It also returns
// a Hider of every secret the resolved server holds (those read from the
// keyring and those still in the state file), to take them out of the
// errors, logs and stderr that may name them.
func ResolveHiding(srv app.Server) (app.Server, *spot.Hider, error) {
	r := resolver{server: srv.Name}
	var err error
	if srv.Env, err = r.mapValues(srv.Env); err != nil {
		return srv, nil, fmt.Errorf("server %q: %w", srv.Name, err)
	}
	if srv.Headers, err = r.mapValues(srv.Headers); err != nil {
		return srv, nil, fmt.Errorf("server %q: %w", srv.Name, err)
	}
	var args []string
	for i, a := range srv.Args {
		v, err := r.value(a)
		if err != nil {
			return srv, nil, fmt.Errorf("server %q: %w", srv.Name, err)
		}
		if v != a && args == nil {
			args = slices.Clone(srv.Args)
		}
		if args != nil {
			args[i] = v
		}
	}
	if args != nil {
		srv.Args = args
	}
	if srv.URL, err = r.value(srv.URL); err != nil {
		return srv, nil, fmt.Errorf("server %q: %w", srv.Name, err)
	}
	return srv, spot.NewHider(append(r.read, Values(srv)...)...), nil
}

// resolver puts one server's secrets back in place of their references.
type resolver struct {
	server string
	read   []string // the secrets read
}

func (r *resolver) value(v string) (string, error) {
	refs := spot.FindRefs(r.server, v)
	if len(refs) == 0 {
		return v, nil
	}
	var b strings.Builder
	last := 0
	for _, ref := range refs {
		secret, err := OS.Get(Service, ref.User)
		if err != nil {
			return "", fmt.Errorf("reading %s from the keyring: %w", spot.RefText(ref.User, false), err)
		}
		r.read = append(r.read, secret)
		b.WriteString(v[last:ref.Start])
		b.WriteString(secret)
		last = ref.End
	}
	b.WriteString(v[last:])
	return b.String(), nil
}

func (r *resolver) mapValues(m map[string]string) (map[string]string, error) {
	var out map[string]string
	for _, name := range slices.Sorted(maps.Keys(m)) {
		v, err := r.value(m[name])
		if err != nil {
			return nil, err
		}
		if v != m[name] {
			if out == nil {
				out = maps.Clone(m)
			}
			out[name] = v
		}
	}
	if out == nil {
		return m, nil
	}
	return out, nil
}

// Values are the secrets spot finds in srv's configuration as it is, in
// clear.
func Values(srv app.Server) []string {
	var out []string
	for i, sp := range spot.InArgs(srv.Args) {
		out = append(out, spot.Parts(srv.Args[i], sp)...)
	}
	for name, v := range srv.Env {
		out = append(out, spot.Parts(v, spot.InEnv(name, v))...)
	}
	for name, v := range srv.Headers {
		out = append(out, spot.Parts(v, spot.InHeader(name, v))...)
	}
	return append(out, spot.Parts(srv.URL, spot.InURL(srv.URL))...)
}

// Redact is srv as `servers list --json` prints it: references stay (they
// are not secrets and say where each secret is), the secret parts of
// values still in the state file become Redacted.
func Redact(srv app.Server) app.Server {
	redact := func(m map[string]string, find func(name, v string) []spot.Span) map[string]string {
		var out map[string]string
		for name, v := range m {
			if sp := find(name, v); len(sp) > 0 {
				if out == nil {
					out = maps.Clone(m)
				}
				out[name] = spot.Replace(v, sp, Redacted)
			}
		}
		if out == nil {
			return m
		}
		return out
	}
	srv.Env = redact(srv.Env, spot.InEnv)
	srv.Headers = redact(srv.Headers, spot.InHeader)
	if found := spot.InArgs(srv.Args); slices.ContainsFunc(found, func(sp []spot.Span) bool { return len(sp) > 0 }) {
		args := slices.Clone(srv.Args)
		for i, sp := range found {
			args[i] = spot.Replace(args[i], sp, Redacted)
		}
		srv.Args = args
	}
	srv.URL = spot.Replace(srv.URL, spot.InURL(srv.URL), Redacted)
	return srv
}

// Where says where srv's secrets are: those in the keyring (its
// references) and those still in the state file, each as "env NAME",
// "header NAME", "argument N" or "URL".
func Where(srv app.Server) (sealed, clear []string) {
	add := func(what, v string, secrets []spot.Span) {
		if len(spot.FindRefs(srv.Name, v)) > 0 {
			sealed = append(sealed, what)
		}
		if len(secrets) > 0 {
			clear = append(clear, what)
		}
	}
	for i, sp := range spot.InArgs(srv.Args) {
		add("argument "+strconv.Itoa(i+1), srv.Args[i], sp)
	}
	for _, name := range slices.Sorted(maps.Keys(srv.Env)) {
		add("env "+name, srv.Env[name], spot.InEnv(name, srv.Env[name]))
	}
	for _, name := range slices.Sorted(maps.Keys(srv.Headers)) {
		add("header "+name, srv.Headers[name], spot.InHeader(name, srv.Headers[name]))
	}
	add("URL", srv.URL, spot.InURL(srv.URL))
	return sealed, clear
}

// Forget deletes every secret a server's references name, for a server
// that is removed. Missing entries are fine.
func Forget(k Keyring, srv app.Server) error {
	if k == nil {
		k = OS
	}
	vals := append(append(slices.Clone(srv.Args), srv.URL), slices.Collect(maps.Values(srv.Env))...)
	vals = append(vals, slices.Collect(maps.Values(srv.Headers))...)
	var errs []error
	seen := map[string]bool{}
	for _, v := range vals {
		for _, r := range spot.FindRefs(srv.Name, v) {
			if seen[r.User] {
				continue
			}
			seen[r.User] = true
			if err := k.Delete(Service, r.User); err != nil && !errors.Is(err, keyring.ErrNotFound) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
