//go:build !unix

package health

// fileID is a folder's identity; unknown on this platform, so renames are
// reported as missing rather than moved.
type fileID struct{}

func idOf(string) (fileID, bool) { return fileID{}, false }
