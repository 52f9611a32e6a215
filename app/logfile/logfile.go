// Package logfile is an append-only log file that rotates while it is being
// written: once it passes its size cap, NAME becomes NAME.1 (NAME.1 becomes
// NAME.2, and so on up to Keep generations; the oldest is dropped) and a new
// NAME is started. A server that writes 300 MB to its stderr then takes at
// most (Keep+1) × MaxSize of disk, whatever it does.
package logfile

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Defaults for Open.
const (
	DefaultMaxSize = 1 << 20
	DefaultKeep    = 3
)

// File is a rotating log file. It is safe for concurrent use.
type File struct {
	path    string
	maxSize int64
	keep    int

	mu   sync.Mutex
	f    *os.File
	size int64
}

// Open opens (creating, mode 0600, with its folder) the log at path. maxSize
// and keep <= 0 take the defaults.
func Open(path string, maxSize int64, keep int) (*File, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	if keep <= 0 {
		keep = DefaultKeep
	}
	l := &File{path: path, maxSize: maxSize, keep: keep}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("log folder: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *File) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("opening log: %w", err)
	}
	l.f, l.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when the file is full. A write larger
// than the cap keeps only its last MaxSize bytes. Write never fails the
// writer for a rotation problem: the log is best effort, the server's
// stderr must keep flowing.
func (l *File) Write(p []byte) (int, error) {
	n := len(p)
	if int64(len(p)) > l.maxSize {
		p = p[int64(len(p))-l.maxSize:]
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return n, nil
	}
	if l.size > 0 && l.size+int64(len(p)) > l.maxSize {
		l.rotate()
		if l.f == nil {
			return n, nil
		}
	}
	m, _ := l.f.Write(p)
	l.size += int64(m)
	return n, nil
}

// rotate shifts the generations and starts a new file; l.mu is held.
func (l *File) rotate() {
	l.f.Close()
	l.f = nil
	os.Remove(l.gen(l.keep))
	for i := l.keep - 1; i >= 1; i-- {
		os.Rename(l.gen(i), l.gen(i+1))
	}
	os.Rename(l.path, l.gen(1))
	if err := l.open(); err != nil {
		l.f = nil
	}
}

func (l *File) gen(i int) string { return fmt.Sprintf("%s.%d", l.path, i) }

// Close closes the file.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
