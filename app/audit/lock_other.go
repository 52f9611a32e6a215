//go:build !unix

package audit

import "os"

// lockFile does nothing where flock does not exist: two processes that
// rotate the same file at the same moment may then both rename it, and the
// older generation is lost. (On Windows a file open in another process
// cannot be renamed anyway; rotation then fails and says so.)
func lockFile(*os.File) error { return nil }
