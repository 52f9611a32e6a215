// Package atomicfile replaces files so that a reader sees the old bytes or
// the new ones, never part of either, and the new ones survive a crash:
// the data goes to a temp file in the same folder, is synced, renamed over
// the file, and the folder is synced so that the rename itself is durable.
// Rootkeeper's state file, the hosts' config files it protects and its
// start-at-login entry are all written this way, by this one function.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Options say how Write writes. The zero value writes mode 0600 with a
// temp file named ".NAME.tmp-*".
type Options struct {
	// Perm is the file's mode (0600 when zero).
	Perm fs.FileMode
	// TempPrefix names the temp file (".NAME.tmp-" when empty), so that a
	// caller can find and remove those left by a process that died.
	TempPrefix string
	// BeforeRename, when set, runs once the temp file is written and
	// synced, right before it replaces the file; an error keeps the file as
	// it is and is returned (a host that rewrote its file meanwhile).
	BeforeRename func() error
}

// Write replaces path with data. On any error the file is left as it was
// and no temp file remains.
func Write(path string, data []byte, o Options) error {
	dir := filepath.Dir(path)
	if o.Perm == 0 {
		o.Perm = 0o600
	}
	if o.TempPrefix == "" {
		o.TempPrefix = "." + filepath.Base(path) + ".tmp-"
	}
	tmp, err := os.CreateTemp(dir, o.TempPrefix+"*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	keep := false
	defer func() {
		if !keep {
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(o.Perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if o.BeforeRename != nil {
		if err := o.BeforeRename(); err != nil {
			return err
		}
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	keep = true
	return SyncDir(dir)
}
