package main

import (
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// readAt reads path's file opened relative to an O_PATH descriptor of its
// folder (openat with a descriptor, not the working folder).
func readAt(path string) (string, error) {
	dfd, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", os.NewSyscallError("open", err)
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, filepath.Base(path), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &os.PathError{Op: "openat", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

// chdirRead reads path's file relative to the working folder, once moved
// (fchdir) to a descriptor of the file's folder opened for listing; the
// working folder is put back after.
func chdirRead(path string) (string, error) {
	back, err := unix.Open(".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", os.NewSyscallError("open", err)
	}
	defer unix.Close(back)
	dfd, err := unix.Open(filepath.Dir(path), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &os.PathError{Op: "open", Path: filepath.Dir(path), Err: err}
	}
	defer unix.Close(dfd)
	if err := unix.Fchdir(dfd); err != nil {
		return "", os.NewSyscallError("fchdir", err)
	}
	defer unix.Fchdir(back)
	b, err := os.ReadFile(filepath.Base(path))
	return string(b), err
}
