//go:build !(linux && (amd64 || arm64))

package audit

import "os"

// writeAll writes p to f.
func writeAll(f *os.File, p []byte) error {
	_, err := f.Write(p)
	return err
}

// statSame is the size of the file at path and whether it is the file id
// describes.
func statSame(path string, id os.FileInfo) (size int64, same bool, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false, err
	}
	return fi.Size(), os.SameFile(id, fi), nil
}
