//go:build !unix

package osfile

import "os"

// ReadFile is os.ReadFile (read_unix.go reads through a bare descriptor).
func ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// ReadFileInto is ReadFile (read_unix.go reads into buf when it has room).
func ReadFileInto(path string, _ []byte) ([]byte, error) { return os.ReadFile(path) }

// Names lists the names in the folder dir.
func Names(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, err
}
