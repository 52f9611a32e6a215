package cli

import (
	"fmt"

	"rootkeeper/app"
)

// Landlock reports the Landlock ABI a confined server runs under on this
// system, or why servers cannot be confined here. main sets it from package
// mcp/confine, which app may not import; nil means this build cannot
// confine at all.
var Landlock func() (int, error)

// NotConfined is what status says of a server that is not confined, so
// that nobody mistakes advice for a boundary.
const NotConfined = "not confined: roots are advice to this server"

// confinement is the status words for srv's confinement: the ABI the
// running server was started under (live), else the one it would get here,
// else why it cannot be confined (and so is not started).
func confinement(srv app.Server, live *app.ServerStatus) string {
	if !srv.Confine || srv.Type != app.TransportStdio {
		return NotConfined
	}
	if live != nil && live.LandlockABI > 0 {
		return fmt.Sprintf("confined (Landlock ABI %d)", live.LandlockABI)
	}
	abi, err := landlockABI()
	if err != nil {
		return fmt.Sprintf("%v; the server is not started", err)
	}
	return fmt.Sprintf("confined (Landlock ABI %d)", abi)
}

func landlockABI() (int, error) {
	if Landlock == nil {
		return 0, fmt.Errorf("cannot confine: this build of Rootkeeper has no Landlock support")
	}
	return Landlock()
}
