//go:build !linux

package atomicfile

// writeSpare is not done (done false) where renameat2 does not exist: Write
// writes a temp file.
func writeSpare(string, []byte, Options) (done bool, err error) { return false, nil }
