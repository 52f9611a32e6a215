package mcp

import "syscall"

// setDeathSignal has the kernel send SIGTERM to the server when Rootkeeper
// dies (PR_SET_PDEATHSIG), so a Rootkeeper killed with SIGKILL leaves no
// server behind. The signal follows the thread that forked the process,
// not the whole process (https://github.com/golang/go/issues/27505), and Go
// ends a thread whenever a goroutine locked to it returns, as the confined
// launch's and an observer's do: so confine.Start forks every server from
// a thread that lives as long as Rootkeeper, or from the confined thread
// of its own that outlives it.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGTERM }
