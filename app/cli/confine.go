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

// LandlockKernel reports the Landlock ABI of this kernel, whatever caps the
// one servers run under (app.EnvLandlockABI): where it is above Landlock's,
// `status` and `doctor` say the ABI is capped, and where it works and
// Landlock does not the cap is at fault, not the kernel. main sets it from
// package mcp/confine; nil means unknown.
var LandlockKernel func() (int, error)

// NotConfined is what status says of a server that is not confined.
const NotConfined = app.NotConfined

// confinement is the status words for srv's confinement (see
// app.ConfinementText).
func confinement(srv app.Server, live *app.ServerStatus) string {
	return app.ConfinementText(srv, live, Landlock, LandlockKernel)
}

func landlockABI() (int, error) {
	if Landlock == nil {
		return 0, fmt.Errorf("cannot confine: this build of Rootkeeper has no Landlock support")
	}
	return Landlock()
}

// kernelABI is LandlockKernel's answer, 0 when it has none.
func kernelABI() int {
	if LandlockKernel == nil {
		return 0
	}
	abi, _ := LandlockKernel()
	return abi
}
