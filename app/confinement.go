package app

import "fmt"

// NotConfined is what the window and `status` say of a server that is not
// confined, so that nobody mistakes advice for a boundary.
const NotConfined = "not confined: roots are advice to this server"

// UnixSocketABI is the first Landlock ABI that confines connecting to named
// unix sockets. Below it the confining child takes unix sockets away with a
// system call filter (mcp/confine keeps the same number).
const UnixSocketABI = 9

// ConfinedText says what a server confined at Landlock ABI abi can and
// cannot reach: "confined (Landlock ABI 7): its folders read-write, what
// it needs to run read-only, nothing else; no unix sockets; network open".
func ConfinedText(abi int) string {
	var sockets string
	switch {
	case abi >= UnixSocketABI:
		sockets = "unix sockets only in its folders"
	default:
		sockets = "no unix sockets"
	}
	signals := ""
	if abi < 6 {
		signals = "; may signal other programs"
	}
	return fmt.Sprintf("confined (Landlock ABI %d): its folders read-write, what it needs to run read-only, nothing else; %s%s; network open", abi, sockets, signals)
}

// ConfinementText is what the window and `status` say about srv's
// confinement: ConfinedText with the ABI the running server was started
// under (live, may be nil) or else the one it would get here (landlock,
// which reports it or why servers cannot be confined here; nil means this
// build cannot confine), "cannot confine: …; the server is not started",
// or NotConfined. Only stdio servers can be confined.
func ConfinementText(srv Server, live *ServerStatus, landlock func() (int, error)) string {
	if !srv.Confine || srv.Type != TransportStdio {
		return NotConfined
	}
	if live != nil && live.LandlockABI > 0 {
		return ConfinedText(live.LandlockABI)
	}
	if landlock == nil {
		return "cannot confine: this build of Rootkeeper has no Landlock support; the server is not started"
	}
	abi, err := landlock()
	if err != nil {
		return fmt.Sprintf("%v; the server is not started", err)
	}
	return ConfinedText(abi)
}
