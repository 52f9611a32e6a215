//go:build !unix

package apptest

import "os/exec"

// OwnGroup does nothing: there are no process groups to join here (the
// end-to-end tests that use it need Xvfb and D-Bus and do not run here,
// but they compile).
func OwnGroup(cmd *exec.Cmd) {}

// KillGroup ends cmd's process (its children are not tracked here).
func KillGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
