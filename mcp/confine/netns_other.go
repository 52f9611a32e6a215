//go:build !linux

package confine

import "os/exec"

// netSpec is the network of its own a server gets on Linux.
type netSpec struct{}

// isolateNetwork: no namespaces here.
func isolateNetwork(*exec.Cmd) *netSpec { return nil }

// Isolation: confined servers get no network of their own here.
func Isolation() (bool, string) { return false, "network namespaces are Linux's" }
