package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// call does the Linux-only operations: opens with given flags, and the
// calls that change a file's metadata, by path and through a descriptor
// opened for reading. ok is false for an op it does not know.
func call(op, path string) (got string, ok bool, err error) {
	wrap := func(name string, err error) error {
		if err == nil {
			return nil
		}
		return &os.PathError{Op: name, Path: path, Err: err}
	}
	// withReadFD runs fn on a descriptor of path opened for reading.
	withReadFD := func(fn func(fd int) error) error {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return wrap("open", err)
		}
		defer unix.Close(fd)
		return fn(fd)
	}
	switch op {
	case "openat2": // read through openat2 with a harmless resolve flag
		got, err = openat2Read(path, unix.RESOLVE_NO_MAGICLINKS)
	case "openat2root": // RESOLVE_IN_ROOT, relative to the file's folder
		got, err = openat2Read(path, unix.RESOLVE_IN_ROOT)
	case "truncate": // open for writing, emptying it, and write "T"
		err = writeFlags(path, unix.O_WRONLY|unix.O_TRUNC)
	case "append": // open for writing, keeping it, and add "+"
		err = writeFlags(path, unix.O_WRONLY|unix.O_APPEND)
	case "create": // create a new file and write "T"
		err = writeFlags(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL)
	case "fchmod":
		err = withReadFD(func(fd int) error { return wrap("fchmod", unix.Fchmod(fd, 0o777)) })
	case "fchown":
		err = withReadFD(func(fd int) error { return wrap("fchown", unix.Fchown(fd, 65534, 65534)) })
	case "fsetxattr":
		err = withReadFD(func(fd int) error { return wrap("fsetxattr", unix.Fsetxattr(fd, "user.nosy", []byte("1"), 0)) })
	case "futimens":
		err = withReadFD(func(fd int) error {
			return wrap("futimens", unix.UtimesNanoAt(fd, "", []unix.Timespec{{Sec: 1}, {Sec: 1}}, unix.AT_EMPTY_PATH))
		})
	case "chattr":
		err = withReadFD(func(fd int) error { return wrap("ioctl", unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, 0x10)) })
	case "chmodproc": // chmod through /proc/self/fd of a descriptor opened for reading
		err = withReadFD(func(fd int) error {
			return wrap("chmod", unix.Chmod("/proc/self/fd/"+itoa(fd), 0o777))
		})
	case "chmod":
		err = wrap("chmod", unix.Chmod(path, 0o777))
	case "chown":
		err = wrap("chown", unix.Chown(path, 65534, 65534))
	case "setxattr":
		err = wrap("setxattr", unix.Setxattr(path, "user.nosy", []byte("1"), 0))
	case "udgram": // a datagram unix socket sending to the socket at path
		err = sendDgram(path)
	case "utimes":
		err = wrap("utimes", unix.Utimes(path, []unix.Timeval{{Sec: 1}, {Sec: 1}}))
	case "exec": // run the program at path, its output what was got
		var out []byte
		out, err = exec.Command(path).Output()
		got = strings.TrimSpace(string(out))
	default:
		return hole(op, path)
	}
	return got, true, err
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func openat2Read(path string, resolve uint64) (string, error) {
	dfd, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", os.NewSyscallError("open", err)
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat2(dfd, filepath.Base(path), &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC, Resolve: resolve})
	if err != nil {
		return "", &os.PathError{Op: "openat2", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

func writeFlags(path string, flags int) error {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	text := "T"
	if flags&unix.O_APPEND != 0 {
		text = "+"
	}
	_, err = unix.Write(fd, []byte(text))
	return err
}

// sendDgram sends a datagram to the unix socket at path from a datagram
// unix socket of its own.
func sendDgram(path string) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	defer unix.Close(fd)
	return os.NewSyscallError("sendto", unix.Sendto(fd, []byte("x"), 0, &unix.SockaddrUnix{Name: path}))
}
