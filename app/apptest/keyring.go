package apptest

import "errors"

// ErrNoSecretService is StartSecretService's answer where no private Secret
// Service can run: only Linux and the BSDs keep secrets in a Secret Service
// over D-Bus; elsewhere go-keyring reaches the Keychain or the Credential
// Manager, which a test cannot start privately.
var ErrNoSecretService = errors.New("no private Secret Service on this platform")
