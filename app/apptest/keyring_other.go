//go:build !unix || darwin

package apptest

import (
	"os"
	"testing"

	"github.com/zalando/go-keyring"
)

// SecretService fails the test where no private Secret Service can run.
func SecretService(t testing.TB) string {
	t.Helper()
	t.Fatal(ErrNoSecretService)
	return ""
}

// StartSecretService returns ErrNoSecretService where no private Secret
// Service can run.
func StartSecretService(dir string) (addr string, stop func(), err error) {
	return "", nil, ErrNoSecretService
}

// SecretServiceMain runs the tests against go-keyring's in-memory keyring:
// the Keychain and the Credential Manager cannot be started privately, and
// a test must not write to the person's own.
func SecretServiceMain(m *testing.M) {
	keyring.MockInit()
	os.Exit(m.Run())
}
