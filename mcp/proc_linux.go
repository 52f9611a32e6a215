package mcp

import "syscall"

// setDeathSignal has the kernel send SIGTERM to the server when Rootkeeper
// dies (PR_SET_PDEATHSIG), so a Rootkeeper killed with SIGKILL leaves no
// server behind. The signal follows the thread that started the process,
// not the whole process (https://github.com/golang/go/issues/27505); Go
// ends threads only around LockOSThread, which the code that starts
// servers does not use.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGTERM }
