package autostart

import (
	"fmt"
	"os"
	"path/filepath"
)

// HiddenFlag is the flag the entry starts Rootkeeper with: the app runs in
// the tray and the window stays closed until the person opens it.
const HiddenFlag = "--hidden"

// Entry is the start-at-login entry of one program on this system.
type Entry struct {
	// Exe is the absolute path of the program started at login.
	Exe string
	// Args follow Exe on its command line.
	Args []string

	b backend
}

// backend is one platform's way of keeping the entry.
type backend interface {
	enabled() (bool, error)
	set(e *Entry, on bool) error
	// where names the file or registry value, for people.
	where() string
}

// Status is what `autostart status` reports.
type Status struct {
	// Enabled says whether the app starts at login.
	Enabled bool `json:"enabled"`
	// Where is the entry's file or registry value.
	Where string `json:"where"`
}

// Default is the entry for the running executable (symlinks resolved, so
// that the entry survives the link it was started through), with
// HiddenFlag.
func Default() (*Entry, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot tell where this program is: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return New(exe, HiddenFlag)
}

// New is the entry that starts exe with args at login, kept the way this
// platform keeps them.
func New(exe string, args ...string) (*Entry, error) {
	if !filepath.IsAbs(exe) {
		return nil, fmt.Errorf("autostart: %q is not an absolute path", exe)
	}
	b, err := platform()
	if err != nil {
		return nil, err
	}
	return &Entry{Exe: exe, Args: args, b: b}, nil
}

// Enabled reports whether the entry is in place.
func (e *Entry) Enabled() (bool, error) { return e.b.enabled() }

// Set puts the entry in place (on) or removes it (off). Both are
// idempotent: turning on again rewrites the entry for e.Exe, which is how a
// moved program is fixed.
func (e *Entry) Set(on bool) error { return e.b.set(e, on) }

// Where names the entry's file or registry value.
func (e *Entry) Where() string { return e.b.where() }

// Status is whether the entry is in place, and where it is kept.
func (e *Entry) Status() (Status, error) {
	on, err := e.Enabled()
	return Status{Enabled: on, Where: e.Where()}, err
}

// Enabled reports whether Rootkeeper starts at login: the window's "Start
// at login" switch shows this.
func Enabled() (bool, error) {
	e, err := Default()
	if err != nil {
		return false, err
	}
	return e.Enabled()
}

// Set turns starting at login on or off for the running executable.
func Set(on bool) error {
	e, err := Default()
	if err != nil {
		return err
	}
	return e.Set(on)
}
