package apptest

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Nobody is the user and group id a permission test runs as: chmod 000
// proves nothing to root, who reads anyway, and this machine's tests run as
// root.
const Nobody = 65534

// nobodyEnv marks a test binary re-executed by AsNobody.
const nobodyEnv = "ROOTKEEPER_TEST_AS_NOBODY"

// Privileged reports whether the tests run as root, whom file permissions
// do not stop.
func Privileged() bool { return os.Geteuid() == 0 }

// AsNobody reports whether the calling test should run its scenario in
// this process: it runs unprivileged already (the tests do not run as
// root, or this is the child AsNobody started). As root it runs the test
// binary again, only this test, as nobody (setpriv), with a HOME and TMPDIR
// that nobody owns; it fails the test with the child's output if the child
// fails (or skipped it), logs that output otherwise, and returns false.
//
//	if !apptest.AsNobody(t) {
//		return
//	}
func AsNobody(t *testing.T) bool {
	t.Helper()
	if os.Getenv(nobodyEnv) != "" || !Privileged() {
		return true
	}
	// The test binary sits in a folder only root may enter: copied out.
	dir := NobodyDir(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(self))
	copyExecutable(t, self, bin)
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, Nobody, Nobody); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run="+runPattern(t.Name()), "-test.v", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), nobodyEnv+"=1", "HOME="+home, "TMPDIR="+home)
	RunAsNobody(t, cmd)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s as nobody (uid %d) failed (%v):\n%s", t.Name(), Nobody, err, out)
	}
	t.Logf("%s as nobody (uid %d):\n%s", t.Name(), Nobody, out)
	return false
}

// runPattern is the -test.run pattern that selects exactly the test (or
// subtest) called name.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// RunAsNobody makes cmd, not started yet, run unprivileged: as root, under
// setpriv as nobody with no supplementary groups; otherwise as it is, for
// whoever runs the tests then is unprivileged already. The program and
// what it reads must be reachable by nobody (see NobodyDir).
func RunAsNobody(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	if !Privileged() {
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("running as root and setpriv (util-linux) is not there to drop privileges: %v", err)
	}
	cmd.Args = append([]string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = setpriv
}

// NobodyDir is a new temporary folder that nobody may enter and list (it
// and the folders above it, up to the system's temp folder, are opened to
// others), for the files an unprivileged run reads. Files nobody must
// write go in a folder chowned to Nobody.
func NobodyDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != "/" && d != filepath.Clean(os.TempDir()); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func copyExecutable(t testing.TB, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
