//go:build !linux

package gui

// trayHostPresent reports whether the desktop shows tray icons. Outside
// Linux (macOS menu bar, Windows notification area) it always does.
func trayHostPresent() bool { return true }
