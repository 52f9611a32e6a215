//go:build unix && !linux

package mcp

import "syscall"

// setDeathSignal does nothing where the kernel has no parent-death signal;
// a server then notices Rootkeeper's death by the end of its stdin.
func setDeathSignal(*syscall.SysProcAttr) {}
