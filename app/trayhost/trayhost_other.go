//go:build !linux

package trayhost

// Present reports whether the desktop shows tray icons. Outside Linux
// (macOS menu bar, Windows notification area) it always does.
func Present() bool { return true }
