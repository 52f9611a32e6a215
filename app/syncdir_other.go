//go:build !unix

package app

// syncDir does nothing: Windows cannot flush a folder opened for reading
// (FlushFileBuffers says "Access denied", so every save failed, seen under
// Wine), and NTFS journals the rename itself.
func syncDir(string) error { return nil }
