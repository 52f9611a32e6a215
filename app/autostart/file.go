package autostart

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"rootkeeper/app/atomicfile"
)

// fileBackend keeps the entry as one file, written by render: the XDG
// autostart .desktop file and the macOS LaunchAgent plist.
type fileBackend struct {
	path   string
	render func(e *Entry) []byte
	// active tells whether an existing file starts the program (an XDG
	// entry can be there and switched off with Hidden=true).
	active func(content []byte) bool
}

func (f *fileBackend) where() string { return f.path }

func (f *fileBackend) enabled() (bool, error) {
	data, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return f.active == nil || f.active(data), nil
}

func (f *fileBackend) set(e *Entry, on bool) error {
	if !on {
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		return err
	}
	return writeAtomic(f.path, f.render(e))
}

// writeAtomic replaces path with data so that a desktop reading at login
// sees the old entry or the new one, never half of one.
func writeAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data, atomicfile.Options{Perm: 0o644}); err != nil {
		return fmt.Errorf("autostart: %w", err)
	}
	return nil
}
