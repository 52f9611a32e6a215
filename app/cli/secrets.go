package cli

import (
	"fmt"

	"rootkeeper/app"
	"rootkeeper/app/secrets"
	"rootkeeper/app/words"
)

// sealer moves the secrets of every server written through this command
// (servers add, import, hosts protect, the window's edits) into the OS
// keyring before the state is saved; when none is reachable it says so on
// stderr, once per secret, and the value stays in the 0600 state file.
// (A bridge puts its own in place: its stderr is its host's, and the
// warning names other servers; Extensions.Bridge sends it to the app.)
func sealer(env Env) *secrets.Sealer {
	return &secrets.Sealer{Warn: func(msg string) {
		fmt.Fprintf(env.Stderr, "rootkeeper: warning: %s\n", words.SafeText(msg))
	}}
}

// redactServers is what `servers list --json` prints: keyring references as
// they are, secrets still in the state file hidden.
func redactServers(servers []app.Server) []app.Server {
	out := make([]app.Server, len(servers))
	for i, s := range servers {
		out[i] = secrets.Redact(s)
	}
	return out
}

// forgetSecrets takes a removed server's secrets out of the keyring; a
// keyring that cannot is worth a warning, not a failed remove.
func (c *command) forgetSecrets(srv app.Server) {
	if err := secrets.Forget(nil, srv); err != nil {
		fmt.Fprintf(c.env.Stderr, "rootkeeper: warning: the keyring kept secrets of the removed server %q: %s\n", words.SafeText(srv.Name), words.SafeText(err.Error()))
	}
}
