package app

import "fmt"

// NotConfined is what the window and `status` say of a server that is not
// confined, so that nobody mistakes advice for a boundary.
const NotConfined = "not confined: roots are advice to this server"

// ConfinementText is what the window and `status` say about srv's
// confinement: "confined (Landlock ABI N)" with the ABI the running server
// was started under (live, may be nil) or else the one it would get here
// (landlock, which reports it or why servers cannot be confined here; nil
// means this build cannot confine), "cannot confine: …; the server is not
// started", or NotConfined. Only stdio servers can be confined.
func ConfinementText(srv Server, live *ServerStatus, landlock func() (int, error)) string {
	if !srv.Confine || srv.Type != TransportStdio {
		return NotConfined
	}
	if live != nil && live.LandlockABI > 0 {
		return fmt.Sprintf("confined (Landlock ABI %d)", live.LandlockABI)
	}
	if landlock == nil {
		return "cannot confine: this build of Rootkeeper has no Landlock support; the server is not started"
	}
	abi, err := landlock()
	if err != nil {
		return fmt.Sprintf("%v; the server is not started", err)
	}
	return fmt.Sprintf("confined (Landlock ABI %d)", abi)
}
