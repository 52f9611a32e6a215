package secrets

import (
	"errors"
	"fmt"
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
	app.EachSecretField(&srv, func(f app.SecretField) string {
		if err != nil {
			return f.Value
		}
		v, ferr := r.value(f.Value)
		if ferr != nil {
			err = ferr
			return f.Value
		}
		return v
	})
	if err != nil {
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

// Values are the secrets spot finds in srv's configuration as it is, in
// clear.
func Values(srv app.Server) []string {
	var out []string
	app.EachSecretField(&srv, func(f app.SecretField) string {
		out = append(out, spot.Parts(f.Value, f.Found)...)
		return f.Value
	})
	return out
}

// Redact is srv as `servers list --json` prints it: references stay (they
// are not secrets and say where each secret is), the secret parts of
// values still in the state file become Redacted.
func Redact(srv app.Server) app.Server {
	app.EachSecretField(&srv, func(f app.SecretField) string { return spot.Replace(f.Value, f.Found, Redacted) })
	return srv
}

// Where says where srv's secrets are: those in the keyring (its
// references) and those still in the state file, each as "env NAME",
// "header NAME", "argument N" or "URL".
func Where(srv app.Server) (sealed, clear []string) {
	app.EachSecretField(&srv, func(f app.SecretField) string {
		if len(spot.FindRefs(srv.Name, f.Value)) > 0 {
			sealed = append(sealed, f.Where())
		}
		if len(f.Found) > 0 {
			clear = append(clear, f.Where())
		}
		return f.Value
	})
	return sealed, clear
}

// Forget deletes every secret a server's references name, for a server
// that is removed. Missing entries are fine.
func Forget(k Keyring, srv app.Server) error {
	if k == nil {
		k = OS
	}
	var errs []error
	seen := map[string]bool{}
	app.EachSecretField(&srv, func(f app.SecretField) string {
		for _, r := range spot.FindRefs(srv.Name, f.Value) {
			if seen[r.User] {
				continue
			}
			seen[r.User] = true
			if err := k.Delete(Service, r.User); err != nil && !errors.Is(err, keyring.ErrNotFound) {
				errs = append(errs, err)
			}
		}
		return f.Value
	})
	return errors.Join(errs...)
}
