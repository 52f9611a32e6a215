package main

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapBelow4G is MAP_32BIT: memory a 32-bit call can address.
const mapBelow4G = unix.MAP_32BIT

// int80 makes i386 system call nr through int 0x80 (int80_amd64.s).
func int80(nr, a1, a2 uint32) int32

// foreignChmod chmods path 0777 through the i386 ABI (chmod is 15 there).
func foreignChmod(path string) error {
	p, free, err := lowString(path)
	if err != nil {
		return err
	}
	defer free()
	if r := int80(15, uint32(p), 0o777); r < 0 {
		return unix.Errno(-r)
	}
	return nil
}

// x32Chmod chmods path 0777 through the x32 ABI (x86-64's number with bit
// 30 set).
func x32Chmod(path string) error {
	p, _ := unix.BytePtrFromString(path)
	_, _, e := unix.Syscall(0x40000000|unix.SYS_CHMOD, uintptr(unsafe.Pointer(p)), 0o777, 0)
	return errOf(e)
}
