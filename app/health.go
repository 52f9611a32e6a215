package app

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

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
		if dev, ok := deviceOf(fi); ok && dev != wantDevice {
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
	d, err := os.Open(path)
	if err != nil {
		h.Status, h.Err = HealthUnreadable, err.Error()
		return h
	}
	defer d.Close()
	if _, err := d.ReadDir(1); err != nil && err != io.EOF {
		h.Status, h.Err = HealthUnreadable, err.Error()
		return h
	}
	h.Status = HealthOK
	return h
}

// DeviceOf returns the filesystem device path is on (0 when unknown).
func DeviceOf(path string) uint64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	dev, _ := deviceOf(fi)
	return dev
}
