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

// EnvLandlockABI names the environment variable that caps the Landlock
// ABI servers are confined at (mcp/confine.EnvABI, which app may not
// import, keeps the same name): a newer kernel then confines as an older
// one would. What it caps is said wherever the ABI is shown.
const EnvLandlockABI = "ROOTKEEPER_LANDLOCK_ABI"

// ABIText is the Landlock ABI servers are confined at as a person reads
// it: "Landlock ABI 7", or, when it is below kernel's (the kernel's own
// ABI; 0 when unknown), "Landlock ABI 2, capped from 7" (EnvLandlockABI).
func ABIText(abi, kernel int) string {
	if kernel > abi {
		return fmt.Sprintf("Landlock ABI %d, capped from %d", abi, kernel)
	}
	return fmt.Sprintf("Landlock ABI %d", abi)
}

// ConfinedText says what a server confined at Landlock ABI abi can and
// cannot reach: "confined (Landlock ABI 7): its folders read-write, what
// it needs to run read-only, nothing else; unix sockets only in its
// folders and where its network allows". (Below Landlock ABI 9 the
// observer checks every connect of a unix socket; Landlock does from ABI
// 9.) Its network is said apart (NetworkText).
func ConfinedText(abi int) string { return CappedConfinedText(abi, 0) }

// CappedConfinedText is ConfinedText for a kernel whose own ABI is kernel
// (0 when unknown): "confined (Landlock ABI 2, capped from 7): …" when abi
// is below it.
func CappedConfinedText(abi, kernel int) string {
	sockets := "unix sockets only in its folders and where its network allows"
	signals := ""
	if abi < 6 {
		signals = "; may signal other programs"
	}
	return fmt.Sprintf("confined (%s): its folders read-write, what it needs to run read-only, nothing else; %s%s", ABIText(abi, kernel), sockets, signals)
}

// ConfinementText is what the window and `status` say about srv's
// confinement: ConfinedText with the ABI the running server was started
// under (live, may be nil) or else the one it would get here (landlock,
// which reports it or why servers cannot be confined here; nil means this
// build cannot confine), said to be capped when it is below the kernel's
// (kernel reports it, uncapped; nil when unknown), or NotConfined. Where
// Landlock is missing, a server confined by default runs unconfined ("not
// confined here: …; roots are advice to this server") and one whose
// confinement was asked for in so many words is not started ("cannot
// confine: …; the server is not started"). Where the kernel has Landlock
// and landlock still fails (EnvLandlockABI is not an ABI), no confined
// server is started. Only stdio servers can be confined.
func ConfinementText(srv Server, live *ServerStatus, landlock, kernel func() (int, error)) string {
	if !srv.Confine || srv.Type != TransportStdio {
		return NotConfined
	}
	kernelABI, kernelErr := 0, errors.New("unknown")
	if kernel != nil {
		kernelABI, kernelErr = kernel()
	}
	if live != nil && live.LandlockABI > 0 {
		return CappedConfinedText(live.LandlockABI, kernelABI)
	}
	var err error
	if landlock == nil {
		err = errors.New("cannot confine: this build of Rootkeeper has no Landlock support")
	} else {
		var abi int
		if abi, err = landlock(); err == nil {
			return CappedConfinedText(abi, kernelABI)
		}
	}
	if !RunsUnconfinedHere(srv, kernelErr != nil) {
		return fmt.Sprintf("%v; the server is not started", err)
	}
	return fmt.Sprintf("not confined here (%s); roots are advice to this server", strings.TrimPrefix(err.Error(), "cannot confine: "))
}

// RunsUnconfinedHere reports whether srv, confined by default, is started
// unconfined when Landlock is missing (landlockMissing: the confining
// code said so): only a server whose confinement was asked for in so many
// words is then not started.
func RunsUnconfinedHere(srv Server, landlockMissing bool) bool {
	return srv.Confine && !srv.ConfineRequired && !ConfinementRequired() && landlockMissing
}
