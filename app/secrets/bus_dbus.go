//go:build unix && !darwin

package secrets

import (
	"errors"

	"github.com/godbus/dbus/v5"
)

// sessionBus checks that a session bus is already there before go-keyring
// is asked: go-keyring connects with godbus's SessionBus, which, finding
// none, runs dbus-launch and leaves a bus daemon (and a keyring daemon it
// activates) running after every command. Without a bus there is no
// keyring, and that is said plainly.
func sessionBus() error {
	conn, err := dbus.SessionBusPrivateNoAutoStartup()
	if err != nil {
		return errors.New("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set), so no Secret Service")
	}
	defer conn.Close()
	if err := conn.Auth(nil); err != nil {
		return err
	}
	return conn.Hello()
}
