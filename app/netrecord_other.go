//go:build !unix

package app

// withRecordLock runs fn: servers are confined, and so observed, on
// Linux only, where the records are written by one process at a time
// under flock (netrecord_unix.go).
func withRecordLock(dir string, fn func() error) error { return fn() }
