// Package spot recognises secrets in a server's configuration and is the
// one place that says what a secret looks like: on its command line (the
// value after --api-key or --password, --header "Authorization: Bearer …",
// -p after -u, tokens anywhere in an argument), in its env values and
// headers (by their names, and inside neutral ones: JWTs, connection
// strings, URLs' passwords), and in its URL (userinfo, tokens in the path,
// query values such as api_key or exaApiKey).
//
// It finds spans, the secret parts of a value, so that only they are
// sealed and hidden: "https://user:(secret)@host/…", "Authorization:
// Bearer (secret)". app/secrets seals what it finds into the keyring and
// leaves references (RefText) in their place; FindRefs finds them again to
// put the secrets back when a server starts; Show… hides secrets and
// references wherever a configuration is printed; a Hider takes the
// secrets out of errors, logs and a server's stderr.
//
// It depends on the standard library only, so that app can import it.
package spot
