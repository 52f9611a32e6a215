//go:build !(linux && (amd64 || arm64))

package atomicfile

// writeSpare is not done (done false) where renameat2 does not exist, or
// filecall makes no raw calls: Write writes a temp file.
func writeSpare(string, []byte, Options) (done bool, err error) { return false, nil }
