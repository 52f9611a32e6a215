//go:build !unix

package gui

import "os/exec"

// The Windows side of proc_unix_test.go; the end-to-end tests that use it
// need Xvfb and D-Bus and do not run here, but they compile.

// ownGroup does nothing: there are no process groups to join here.
func ownGroup(cmd *exec.Cmd) {}

// killGroup ends cmd's process (its children are not tracked here).
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
