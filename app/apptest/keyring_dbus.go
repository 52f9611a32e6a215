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

// waitForName waits until name has an owner on the bus at addr: it
// listens for the bus's NameOwnerChanged before it asks, so that the name
// appearing in between is not missed.
func waitForName(addr, name string, within time.Duration) error {
	conn, err := dbus.Connect(addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.AddMatchSignal(dbus.WithMatchInterface("org.freedesktop.DBus"), dbus.WithMatchMember("NameOwnerChanged"),
		dbus.WithMatchArg(0, name)); err != nil {
		return err
	}
	signals := make(chan *dbus.Signal, 8)
	conn.Signal(signals)
	var has bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has); err != nil {
		return err
	}
	hung := time.After(within)
	for !has {
		select {
		case sig := <-signals:
			if len(sig.Body) == 3 {
				owner, _ := sig.Body[2].(string)
				has = owner != ""
			}
		case <-hung:
			return errors.New(name + " did not appear on the private session bus")
		}
	}
	return nil
}

// SecretServiceMain is the TestMain of a package whose tests all talk to
// the Secret Service: go-keyring's D-Bus connection is one per process, so
// the service is one per test binary. It starts a real one (StartSecretService)
// in a temporary folder, points DBUS_SESSION_BUS_ADDRESS at it, runs the
// tests, ends the daemons and exits with the tests' code.
func SecretServiceMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rootkeeper-keyring-")
	if err != nil {
		panic(err)
	}
	addr, stop, err := StartSecretService(dir)
	if err != nil {
		os.RemoveAll(dir)
		panic(err)
	}
	os.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	code := m.Run()
	stop()
	os.RemoveAll(dir)
	os.Exit(code)
}
