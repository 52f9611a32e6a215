//go:build !linux

package confine

import (
	"fmt"
	"os/exec"
	"runtime"
	"time"
)

// ABI always fails here: Landlock is Linux's. A server the person asked to
// confine is not started on this system rather than started unconfined.
func ABI() (int, error) {
	return 0, fmt.Errorf("%w: Landlock exists only on Linux, and this is %s", ErrUnavailable, runtime.GOOS)
}

// KernelABI fails here, as ABI does.
func KernelABI() (int, error) { return ABI() }

// EnvABI names the variable that caps the Landlock ABI on Linux.
const EnvABI = "ROOTKEEPER_LANDLOCK_ABI"

// Observer observes nothing here: WrapObserved fails as Wrap does.
type Observer struct {
	Wait       time.Duration
	MaxWaiting int
	Network    Network
}

// WrapObserved fails here: see ABI.
func WrapObserved(cmd *exec.Cmd, p Policy) (int, *Observer, error) {
	_, err := ABI()
	return 0, nil, err
}

// Start does nothing here.
func (o *Observer) Start(Reach) error { return nil }

// Close does nothing here.
func (o *Observer) Close() {}

// Handed is 0 here.
func (o *Observer) Handed() int { return 0 }

// Seen is 0 here.
func (o *Observer) Seen() int { return 0 }

// Start starts cmd as cmd.Start does: nothing is confined here.
func Start(cmd *exec.Cmd) error { return cmd.Start() }

// Extend does nothing here.
func (o *Observer) Extend([]string) {}

// launchInProcess: nothing is started confined here.
var launchInProcess = false

// answersFirstExec: nothing is launched from a thread here.
const answersFirstExec = false
