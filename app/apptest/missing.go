package apptest

import (
	"os"
	"os/exec"
	"testing"
)

// UnderCI reports whether the tests run under CI (the environment variable
// CI set, as CI services and .ci/run set it, to anything but "false" or
// "0"), where everything they need is installed and granted.
func UnderCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

// Missing ends a test that cannot run here for want of what why names
// (root, a mount, Landlock, a program): it skips it, but under CI it fails
// it, so that a machine missing something is noticed rather than counted
// as passing. It is the one way a test skips for want of something; a skip
// for -short or for another system is a plain t.Skip.
func Missing(t testing.TB, why string) {
	t.Helper()
	if UnderCI() {
		t.Fatalf("%s (a skip elsewhere; under CI it fails)", why)
	}
	t.Skip(why)
}

// NeedProgram returns the path of the program name found in PATH, or ends
// the test with Missing.
func NeedProgram(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name+" is not installed (run .ci/setup)")
	}
	return p
}
