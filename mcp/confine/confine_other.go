//go:build !linux

package confine

import (
	"fmt"
	"runtime"
)

// ABI always fails here: Landlock is Linux's. A server the person asked to
// confine is not started on this system rather than started unconfined.
func ABI() (int, error) {
	return 0, fmt.Errorf("%w: Landlock exists only on Linux, and this is %s", ErrUnavailable, runtime.GOOS)
}
