//go:build !unix

package app

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// withLock serialises writers with an exclusively created lock file where
// flock does not exist. A lock older than a minute is taken to be a
// leftover of a crashed process.
func (s *Store) withLock(exclusive bool, fn func() error) error {
	path := filepath.Join(s.dir, lockFileName+".excl")
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			break
		}
		if fi, serr := os.Stat(path); serr == nil && time.Since(fi.ModTime()) > time.Minute {
			os.Remove(path)
			continue
		}
		if !os.IsExist(err) {
			return fmt.Errorf("locking %s: %w", path, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer os.Remove(path)
	return fn()
}
