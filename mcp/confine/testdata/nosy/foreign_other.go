//go:build linux && !amd64

package main

import "golang.org/x/sys/unix"

const mapBelow4G = 0

// foreignChmod: the i386 ABI is x86-64's.
func foreignChmod(string) error { return unix.ENOSYS }

// x32Chmod: the x32 ABI is x86-64's.
func x32Chmod(string) error { return unix.ENOSYS }
