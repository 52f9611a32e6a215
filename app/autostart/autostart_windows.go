//go:build windows

package autostart

import (
	"errors"
	"strings"
	"syscall"

	"golang.org/x/sys/windows/registry"
)

const (
	runKey   = `Software\Microsoft\Windows\CurrentVersion\Run`
	runValue = "Rootkeeper"
)

// platform is the current user's Run key, which Explorer reads at login.
func platform() (backend, error) { return runKeyBackend{}, nil }

type runKeyBackend struct{}

func (runKeyBackend) where() string { return `HKCU\` + runKey + `\` + runValue }

func (runKeyBackend) enabled() (bool, error) {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer k.Close()
	_, _, err = k.GetStringValue(runValue)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (runKeyBackend) set(e *Entry, on bool) error {
	k, _, err := registry.CreateKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		return err
	}
	defer k.Close()
	if !on {
		if err := k.DeleteValue(runValue); err != nil && !errors.Is(err, registry.ErrNotExist) {
			return err
		}
		return nil
	}
	return k.SetStringValue(runValue, windowsCommandLine(append([]string{e.Exe}, e.Args...)))
}

// windowsCommandLine quotes each argument the way CommandLineToArgvW reads
// it back.
func windowsCommandLine(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = syscall.EscapeArg(a)
	}
	return strings.Join(parts, " ")
}
