// Package logfile is an append-only log file that rotates while it is being
// written: once it passes its size cap, NAME becomes NAME.1 (NAME.1 becomes
// NAME.2, and so on up to Keep generations; the oldest is dropped) and a new
// NAME is started. A server that writes 300 MB to its stderr then takes at
// most (Keep+1) × MaxSize of disk, whatever it does.
package logfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Defaults for Open.
const (
	DefaultMaxSize = 1 << 20
	DefaultKeep    = 3
)

// RetryEvery is how often a log that could not be opened again (its folder
// gone, a rename refused) is tried again while it is written to.
const RetryEvery = 5 * time.Second

// File is a rotating log file. It is safe for concurrent use.
type File struct {
	path    string
	maxSize int64
	keep    int
	// OnProblem, when set (before the first Write), is told when the log
	// starts failing to rotate or open (with the error) and when it works
	// again (nil): writes never fail the writer, so this is how the
	// problem reaches the person (the server's card says it).
	OnProblem func(error)
	// now is the clock of the retries (time.Now; tests move it).
	now func() time.Time

	mu      sync.Mutex
	f       *os.File
	size    int64
	problem error     // the last rotation or open failure, nil when all is well
	retryAt time.Time // when a log that could not be opened is tried again
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
	l := &File{path: path, maxSize: maxSize, keep: keep, now: time.Now}
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
// stderr must keep flowing. A log that could not be opened again is tried
// again every RetryEvery, and OnProblem says so meanwhile; what is written
// while it cannot be opened is lost.
func (l *File) Write(p []byte) (int, error) {
	n := len(p)
	if int64(len(p)) > l.maxSize {
		p = p[int64(len(p))-l.maxSize:]
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		if l.now().Before(l.retryAt) {
			return n, nil
		}
		if l.reopen() != nil {
			return n, nil
		}
	}
	if l.size > 0 && l.size+int64(len(p)) > l.maxSize && !l.now().Before(l.retryAt) {
		if l.rotate() != nil && l.f == nil {
			return n, nil
		}
	}
	m, _ := l.f.Write(p)
	l.size += int64(m)
	return n, nil
}

// rotate shifts the generations and starts a new file; l.mu is held. A
// generation that cannot be renamed is a problem, said once; the file
// then goes on growing past its cap until rotating works again.
func (l *File) rotate() error {
	l.f.Close()
	l.f = nil
	os.Remove(l.gen(l.keep))
	var errs []error
	for i := l.keep - 1; i >= 1; i-- {
		if err := os.Rename(l.gen(i), l.gen(i+1)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := os.Rename(l.path, l.gen(1)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := l.reopen(); err != nil {
		return err
	}
	if err := errors.Join(errs...); err != nil {
		l.retryAt = l.now().Add(RetryEvery)
		l.setProblem(fmt.Errorf("rotating %s: %w", l.path, err))
		return err
	}
	return nil
}

// reopen opens the log again (its folder made again if it went), or
// notes the problem and when to try again; l.mu is held.
func (l *File) reopen() error {
	err := os.MkdirAll(filepath.Dir(l.path), 0o700)
	if err == nil {
		err = l.open()
	}
	if err != nil {
		l.f = nil
		l.retryAt = l.now().Add(RetryEvery)
		l.setProblem(fmt.Errorf("%s cannot be written: %w", l.path, err))
		return err
	}
	l.setProblem(nil)
	return nil
}

// setProblem records the problem and tells OnProblem when it changed;
// l.mu is held.
func (l *File) setProblem(err error) {
	if (err == nil) == (l.problem == nil) && (err == nil || err.Error() == l.problem.Error()) {
		return
	}
	l.problem = err
	if l.OnProblem != nil {
		l.OnProblem(err)
	}
}

// Problem is the log's last failure to rotate or open, nil when it works.
func (l *File) Problem() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.problem
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
