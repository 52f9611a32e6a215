//go:build !unix || darwin

package apptest

import "testing"

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
