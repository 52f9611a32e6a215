package app

import (
	"errors"
	"fmt"
	"strings"
)

// NotConfined is what the window and `status` say of a server that is not
// confined, so that nobody mistakes advice for a boundary.
const NotConfined = "not confined: roots are advice to this server"

// UnixSocketABI is the first Landlock ABI that confines connecting to named
// unix sockets. Below it the confining child takes unix sockets away with a
// system call filter (mcp/confine keeps the same number).
const UnixSocketABI = 9

// ConfinedText says what a server confined at Landlock ABI abi can and
// cannot reach: "confined (Landlock ABI 7): its folders read-write, what
// it needs to run read-only, nothing else; unix sockets only in its
// folders; network open". (Below Landlock ABI 9 the observer checks every
// connect of a unix socket; Landlock does from ABI 9.)
func ConfinedText(abi int) string {
	sockets := "unix sockets only in its folders"
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
// build cannot confine), or NotConfined. Where Landlock is missing, a
// server confined by default runs unconfined ("not confined here: …;
// roots are advice to this server") and one whose confinement was asked
// for in so many words is not started ("cannot confine: …; the server is
// not started"). Only stdio servers can be confined.
func ConfinementText(srv Server, live *ServerStatus, landlock func() (int, error)) string {
	if !srv.Confine || srv.Type != TransportStdio {
		return NotConfined
	}
	if live != nil && live.LandlockABI > 0 {
		return ConfinedText(live.LandlockABI)
	}
	var err error
	if landlock == nil {
		err = errors.New("cannot confine: this build of Rootkeeper has no Landlock support")
	} else {
		var abi int
		if abi, err = landlock(); err == nil {
			return ConfinedText(abi)
		}
	}
	if srv.ConfineRequired {
		return fmt.Sprintf("%v; the server is not started", err)
	}
	return fmt.Sprintf("not confined here (%s); roots are advice to this server", strings.TrimPrefix(err.Error(), "cannot confine: "))
}

// RunsUnconfinedHere reports whether srv, confined by default, is started
// unconfined when Landlock is missing (landlockMissing: the confining
// code said so): only a server whose confinement was asked for in so many
// words is then not started.
func RunsUnconfinedHere(srv Server, landlockMissing bool) bool {
	return srv.Confine && !srv.ConfineRequired && landlockMissing
}
