package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"rootkeeper/app/osfile"
)

// HealthChecker checks a root's access again when the person asks (the
// window's "Check again", `rootkeeper roots check`): the running app's
// health monitor does, and the window reaches it through package link.
type HealthChecker interface {
	// Check checks the enabled root at path now and returns its health
	// once that check is done and published.
	Check(ctx context.Context, path string) (Health, error)
}

// CheckAccess is the access check a root must pass before it is exposed: the
// folder exists, is a directory, is still reached without symlinks (path is
// canonical), can be opened and listed, and is still on the filesystem
// device it was on when added (wantDevice; 0 skips that test). An unmounted drive leaves an empty mount point on another device
// behind, which this reports as HealthUnmounted.
func CheckAccess(path string, wantDevice uint64) Health {
	h := Health{Checked: time.Now().UTC()}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		// ENOTDIR: a folder on the way was replaced by a file.
		h.Status, h.Err = HealthMissing, err.Error()
		return h
	case err != nil:
		// Permission denied, but also EIO, ESTALE (a dead network mount)
		// and ELOOP: the folder may be there, but cannot be used.
		h.Status, h.Err = HealthUnreadable, err.Error()
		return h
	case !fi.IsDir():
		h.Status, h.Err = HealthNotDir, path+" is not a directory"
		return h
	}
	if wantDevice != 0 {
		if dev, ok := osfile.DeviceOf(fi); ok && dev != wantDevice {
			h.Status, h.Err = HealthUnmounted, path+" is no longer on the drive it was on (unmounted?)"
			return h
		}
	}
	// The folder that was shared lives at its canonical path. If a
	// symlink now stands there or on the way (a swapped folder, a rewired
	// parent), the path leads somewhere nobody approved.
	if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
		h.Status, h.Err = HealthMissing, path+" now leads to "+real+" through a symlink; the folder that was shared is not there"
		return h
	}
	d, err := osfile.OpenNoWait(path)
	if err != nil {
		h.Status, h.Err = HealthUnreadable, err.Error()
		return h
	}
	defer d.Close()
	if fi, err := d.Stat(); err != nil || !fi.IsDir() {
		// Swapped for something else since the Stat above.
		h.Status, h.Err = HealthNotDir, path+" is not a directory"
		return h
	}
	if _, err := d.ReadDir(1); err != nil && err != io.EOF {
		h.Status, h.Err = HealthUnreadable, err.Error()
		return h
	}
	h.Status = HealthOK
	return h
}

// CheckAccessWithin is CheckAccess bounded by timeout: a check that has not
// finished by then (a dead network mount, a hung FUSE server) counts as
// unreadable, never as ok, so the folder is withdrawn rather than left with
// its last health. The stuck check is left behind on its own goroutine.
func CheckAccessWithin(path string, wantDevice uint64, timeout time.Duration) Health {
	return WithDeadline(timeout, func() Health { return CheckAccess(path, wantDevice) },
		func() Health { return TimedOut(path, timeout) })
}

// TimedOut is the health of a folder whose check did not finish in time.
func TimedOut(path string, timeout time.Duration) Health {
	return Health{Status: HealthUnreadable, Checked: time.Now().UTC(),
		Err: fmt.Sprintf("the access check of %s did not finish within %s (a dead network mount or a blocking file?)", path, timeout)}
}

// WithDeadline returns check's result, or late's if check has not returned
// within timeout. check runs on its own goroutine, which is left behind if it
// never returns.
func WithDeadline[T any](timeout time.Duration, check func() T, late func() T) T {
	done := make(chan T, 1)
	go func() { done <- check() }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case v := <-done:
		return v
	case <-t.C:
		return late()
	}
}

// DeviceOf returns the filesystem device path is on (0 when unknown).
func DeviceOf(path string) uint64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	dev, _ := osfile.DeviceOf(fi)
	return dev
}
