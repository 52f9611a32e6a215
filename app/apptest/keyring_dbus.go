//go:build unix && !darwin

package apptest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// SecretService starts a real Secret Service for the test: a private D-Bus
// session bus (dbus-daemon) with gnome-keyring-daemon on it, its login
// keyring created and unlocked. It sets DBUS_SESSION_BUS_ADDRESS for the
// test (so go-keyring and children use it, never the person's keyring) and
// returns that address. Both daemons end with the test.
//
// It needs dbus-daemon and gnome-keyring-daemon (.ci/setup installs them).
func SecretService(t testing.TB) string {
	t.Helper()
	addr, stop, err := StartSecretService(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	return addr
}

// StartSecretService is SecretService for a TestMain: the daemons keep
// their files in dir, and stop ends them.
func StartSecretService(dir string) (addr string, stop func(), err error) {
	for _, tool := range []string{"dbus-daemon", "gnome-keyring-daemon"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", nil, fmt.Errorf("%s is needed for a real Secret Service (Debian: dbus, gnome-keyring; run .ci/setup)", tool)
		}
	}
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(run, 0o700); err != nil {
		return "", nil, err
	}
	bus := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1",
		"--address=unix:path="+filepath.Join(run, "bus"))
	bus.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := bus.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := bus.Start(); err != nil {
		return "", nil, err
	}
	var procs []*exec.Cmd
	stop = func() {
		for i := len(procs) - 1; i >= 0; i-- {
			syscall.Kill(-procs[i].Process.Pid, syscall.SIGKILL)
			procs[i].Wait()
		}
	}
	procs = append(procs, bus)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("dbus-daemon printed no address: %w", err)
	}
	addr = strings.TrimSpace(line)

	keyring := exec.Command("gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets")
	keyring.Env = append(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+addr, "HOME="+dir,
		"XDG_RUNTIME_DIR="+run, "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	keyring.Stdin = strings.NewReader("rootkeeper-test") // the login keyring's password
	keyring.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := keyring.Start(); err != nil {
		stop()
		return "", nil, err
	}
	procs = append(procs, keyring)
	if err := waitForName(addr, "org.freedesktop.secrets", 10*time.Second); err != nil {
		stop()
		return "", nil, err
	}
	return addr, stop, nil
}

// waitForName waits until name has an owner on the bus at addr.
func waitForName(addr, name string, within time.Duration) error {
	conn, err := dbus.Connect(addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		var has bool
		if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has); err == nil && has {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New(name + " did not appear on the private session bus")
}
