//go:build !unix

package osfile

import (
	"fmt"
	"os"
	"time"
)

// WithLock serialises writers with an exclusively created lock file
// (path+".excl") where flock does not exist; exclusive is not consulted,
// every holder is exclusive. A lock older than a minute is taken to be a
// leftover of a crashed process.
func WithLock(path string, exclusive bool, fn func() error) error {
	excl := path + ".excl"
	for {
		f, err := os.OpenFile(excl, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			break
		}
		if fi, serr := os.Stat(excl); serr == nil && time.Since(fi.ModTime()) > time.Minute {
			os.Remove(excl)
			continue
		}
		if !os.IsExist(err) {
			return fmt.Errorf("locking %s: %w", excl, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer os.Remove(excl)
	return fn()
}
