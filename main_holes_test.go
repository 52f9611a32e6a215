//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/mcp/confine"
)

// TestHolesThroughTheBinary: a host runs `rootkeeper bridge` for a
// confined server that attacks the boundary with the calls that got past
// it before the allowlist (CI runs this at every Landlock ABI): an open
// for reading that empties a file, a truncate by name, an inotify watch,
// file_setattr, FS_IOC_SETVERSION, chmod through the i386 and x32 ABIs,
// io_uring, a system call no kernel has yet, a seccomp listener of its
// own. Each is refused with the answer the table gives, no file of the
// person's changes, what it tried is recorded as what it is (a truncate,
// never a read), and what it may do in its own data folder still works.
func TestHolesThroughTheBinary(t *testing.T) {
	state, secret := reachSetup(t)
	abi, _ := confine.ABI()
	h := startHostSession(t, state)
	a, b := filepath.Join(secret, "a.txt"), filepath.Join(secret, "b.txt")
	data, err := app.ServerDataFolder(state, "nosy")
	if err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(data, "notes.txt")
	var flags int
	withFile(t, a, func(fd int) { flags, _ = unix.IoctlGetInt(fd, unix.FS_IOC_GETFLAGS) })

	calls := []struct{ op, path, want string }{
		{"rdtrunc", a, "permission denied"},
		{"truncpath", b, "permission denied"},
		{"watch", secret, "permission denied"},
		{"setattr", a, "operation not permitted"},
		{"int80chmod", a, "operation not permitted"},
		{"x32chmod", a, "operation not permitted"},
		{"iouring", "", "operation not permitted"},
		{"syscall", "600", "function not implemented"},
		{"listener", "", "operation not permitted"},
		{"write", notes, `ok\":true`},
		{"chmod", notes, `ok\":true`},
		{"utimes", notes, `ok\":true`},
		{"setxattr", notes, `ok\":true`},
	}
	if runtime.GOARCH != "amd64" {
		calls = calls[:4]
	}
	for _, c := range calls {
		if line := <-h.try(c.op, c.path); !strings.Contains(line, c.want) {
			t.Errorf("%s %s: %s; want %q", c.op, c.path, line, c.want)
		}
	}
	for f, body := range map[string]string{a: "secret a", b: "secret b"} {
		if got, err := os.ReadFile(f); err != nil || string(got) != body {
			t.Errorf("%s is %q (%v), was %q", f, got, err, body)
		}
	}
	if fi, err := os.Stat(a); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s's mode: %v (%v)", a, fi.Mode(), err)
	}
	withFile(t, a, func(fd int) {
		if got, _ := unix.IoctlGetInt(fd, unix.FS_IOC_GETFLAGS); got != flags {
			t.Errorf("%s's attribute flags: %#x, were %#x", a, got, flags)
		}
	})

	// What it tried is recorded as a truncate: in the request status
	// lists, and in the audit log.
	var req app.Request
	waitFor(t, "the request for the secret folder", func() bool {
		var ok bool
		req, ok = reachRequest(t, state, secret)
		return ok
	})
	if req.Op != app.OpTruncate {
		t.Errorf("the request says nosy tried to %q %s; want a truncate", req.Op, req.Tried)
	}
	entries, err := audit.Read(state, "nosy")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, e := range entries {
		if e.Via == audit.ViaReach {
			seen[e.Tried] += e.Op + " "
		}
	}
	if abi >= 3 && seen[a] != "truncate " {
		t.Errorf("the audit log says nosy tried %q on %s; want one truncate", seen[a], a)
	}
	if seen[b] != "truncate " {
		t.Errorf("the audit log says nosy tried %q on %s; want one truncate", seen[b], b)
	}
	if !strings.Contains(seen[secret], "watch") {
		t.Errorf("the audit log has no watch of %s: %q", secret, seen)
	}
	if out, err := json.Marshal(seen); err == nil && strings.Contains(string(out), "read") {
		t.Errorf("an attempt was recorded as a read: %s", out)
	}
}

func withFile(t *testing.T, path string, fn func(fd int)) {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	fn(fd)
}
