//go:build !unix

package hosts

import "os"

// openNonBlocking opens path for reading (named pipes are not files on
// the file system here: readHostFile's stat refuses what is not regular).
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }
