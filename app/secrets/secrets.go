package secrets

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zalando/go-keyring"

	"rootkeeper/app/secrets/spot"
)

// Service is the keyring service every Rootkeeper secret is filed under.
const Service = "rootkeeper"

// Redacted stands for a secret value that is still in the state file (no
// keyring was reachable) in `servers list --json`, where references are
// printed as they are.
const Redacted = "(secret, kept in state.json)"

// The kinds of configured values a secret can be: an env variable's or a
// header's value, (part of) a command-line argument, (part of) a URL.
const (
	KindEnv    = spot.KindEnv
	KindHeader = spot.KindHeader
	KindArg    = spot.KindArg
	KindURL    = spot.KindURL
)

// Timeout bounds one keyring call: a locked keyring may ask the person for
// a password in a dialog nobody answers (headless, at login), and a save or
// a server's start must not wait on it forever.
var Timeout = 10 * time.Second

// Keyring is where secrets are kept: the OS keyring (OS).
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

// ErrNotFound is returned by ResolveHiding when a reference names a secret
// the keyring does not hold.
var ErrNotFound = keyring.ErrNotFound

// Available reports whether the keyring answers, by reading an entry that
// does not exist: "not found" is the healthy answer.
func Available(k Keyring) error {
	_, err := k.Get(Service, "probe//none")
	if err == nil || errors.Is(err, keyring.ErrNotFound) {
		return nil
	}
	return err
}
