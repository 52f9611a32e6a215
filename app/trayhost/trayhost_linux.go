//go:build linux

package trayhost

import (
	"github.com/godbus/dbus/v5"
)

// WatcherName is the bus name a tray host (a StatusNotifierWatcher) owns
// on the session bus; Fyne's tray registers its item with it.
const WatcherName = "org.kde.StatusNotifierWatcher"

// Present reports whether a tray host owns its name on the session bus.
// Fyne's tray needs one and says nothing when there is none: the icon just
// never appears.
func Present() bool {
	// Without autostart: with no session bus, godbus would run dbus-launch
	// and leave a bus daemon behind, for an answer that is "no" anyway.
	conn, err := dbus.SessionBusPrivateNoAutoStartup()
	if err != nil {
		return false
	}
	defer conn.Close()
	if conn.Auth(nil) != nil || conn.Hello() != nil {
		return false
	}
	var has bool
	err = conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, WatcherName).Store(&has)
	return err == nil && has
}
