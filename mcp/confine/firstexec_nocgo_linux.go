//go:build linux && !cgo

package confine

// answersFirstExec: without cgo there is no thread the Go runtime does not
// stop to answer a launch's exec (firstexec_cgo_linux.go), so a server
// started from a confined thread runs its programs unseen, Landlock alone
// deciding (filterMode.execUnseen).
const answersFirstExec = false

// launchServer is not made without cgo.
type launchServer struct{}

// newLaunchServer is never called without cgo (answersFirstExec).
func newLaunchServer() (*launchServer, error) { return nil, nil }

// serve does nothing without cgo.
func (*launchServer) serve(int) error { return nil }

// done does nothing without cgo.
func (*launchServer) done() {}
