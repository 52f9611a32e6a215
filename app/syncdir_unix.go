//go:build unix

package app

import "os"

// syncDir makes a rename in dir durable: the new directory entry reaches
// the disk, not only the file's bytes.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
