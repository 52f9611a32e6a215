//go:build linux

package gui

import (
	"github.com/godbus/dbus/v5"
)

// trayHostPresent reports whether a tray host (a StatusNotifierWatcher)
// owns its name on the session bus. Fyne's tray needs one and says nothing
// when there is none: the icon just never appears.
func trayHostPresent() bool {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return false
	}
	defer conn.Close()
	var has bool
	err = conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&has)
	return err == nil && has
}
