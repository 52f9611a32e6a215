//go:build !unix

package atomicfile

// SyncDir does nothing: Windows cannot flush a folder opened for reading
// (FlushFileBuffers says "Access denied", so every save failed, seen under
// Wine), and NTFS journals the rename itself.
func SyncDir(string) error { return nil }
