//go:build unix

package atomicfile

import "os"

// SyncDir makes a rename in dir durable: the new directory entry reaches
// the disk, not only the file's bytes.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
