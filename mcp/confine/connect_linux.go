package confine

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Below Landlock ABI 9 Landlock cannot stop a connect to a named unix
// socket, so a confined server was given no unix sockets at all
// (noUnixSockets). Browsers need them for themselves (Chromium's singleton
// socket in its profile), so an observed server may make stream and
// seqpacket unix sockets, and the observer sees each connect: a unix
// socket may connect only to a socket file inside the server's read-write
// folders (what it made itself there: Landlock decides who may make one),
// never to an abstract address (Landlock's scoping, which would stop an
// abstract connect past the server's domain, does not bind Rootkeeper, which
// does the connect). A datagram unix socket stays refused: one may send to
// any named socket, connected or not. What is not a unix socket (TCP,
// UDP: the network is not confined) is connected as asked.
//
// The observer does every connect itself, on its own reference to the
// server's socket (pidfd_getfd): were the call let go on after the check,
// another thread of the server could put a unix socket under that
// descriptor number, or another address in its memory, in between. A path
// is opened beneath the read-write folder it is in, following no link
// (O_PATH), and connected through /proc/self/fd/N: the socket checked is the
// socket reached. The peer sees Rootkeeper's pid in its credentials (the
// same user).

// maxConnecting bounds the connects the observer does at once for one
// server (a connect may wait: a TCP handshake, a full backlog); more fail
// with EAGAIN.
const maxConnecting = 128

// answerConnect does the server's connect (notification n) in the
// background and answers it with what came of it.
func (o *Observer) answerConnect(fd int, n seccompNotif) {
	select {
	case o.connecting <- struct{}{}:
	default:
		o.answer(fd, n.id, unix.EAGAIN)
		return
	}
	go func() {
		defer func() { <-o.connecting }()
		e := o.connect(fd, &n)
		o.mu.RLock()
		defer o.mu.RUnlock()
		if o.fd == fd { // the listener is still the one the call came on
			o.answer(fd, n.id, e)
		}
	}()
}

// answer fails call id with e, or makes it succeed (e == 0).
func (o *Observer) answer(fd int, id uint64, e unix.Errno) {
	r := seccompNotifResp{id: id, error: -int32(e)}
	ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
}

// connect does the connect n asks for, as above, and returns its errno.
func (o *Observer) connect(fd int, n *seccompNotif) unix.Errno {
	pid := int(n.pid)
	size := n.args[2]
	if size > unix.SizeofSockaddrAny {
		return unix.EINVAL // the kernel's answer to an address longer than any
	}
	addr := make([]byte, size)
	if size > 0 && readMem(pid, uintptr(n.args[1]), addr) != nil {
		return unix.EFAULT
	}
	sock, err := serverFile(pid, int(int32(n.args[0])))
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(sock)
	id := n.id
	if ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) != nil {
		return unix.EINTR
	}
	domain, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return errnoOf(err) // ENOTSOCK
	}
	if domain != unix.AF_UNIX {
		return rawConnect(sock, addr)
	}
	path, errno := o.unixTarget(pid, addr)
	if errno != 0 {
		return errno
	}
	target, err := o.openSocketFile(path)
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(target)
	return rawConnect(sock, sockaddrUnix("/proc/self/fd/"+strconv.Itoa(target)))
}

// unixTarget is the socket file a unix address names, absolute; abstract
// and unnamed addresses are refused.
func (o *Observer) unixTarget(pid int, addr []byte) (string, unix.Errno) {
	if len(addr) < 2 || *(*uint16)(unsafe.Pointer(&addr[0])) != unix.AF_UNIX {
		return "", unix.EINVAL
	}
	name := addr[2:]
	if len(name) == 0 || name[0] == 0 {
		return "", unix.EACCES // abstract, or no name
	}
	if i := indexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	path := string(name)
	if !filepath.IsAbs(path) {
		cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
		if err != nil || !filepath.IsAbs(cwd) {
			return "", unix.EACCES
		}
		path = filepath.Join(cwd, path)
	}
	return filepath.Clean(path), 0
}

// openSocketFile opens path, a socket file in one of the server's
// read-write folders, O_PATH beneath that folder following no link.
func (o *Observer) openSocketFile(path string) (int, error) {
	for _, w := range o.writable {
		if !within(path, w) || path == w {
			continue
		}
		dir, err := unix.Open(w, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(path, w), "/")
		f, err := unix.Openat2(dir, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		unix.Close(dir)
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		got, lerr := os.Readlink("/proc/self/fd/" + strconv.Itoa(f))
		if unix.Fstat(f, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK || lerr != nil || o.protected(got) {
			unix.Close(f)
			return -1, unix.ECONNREFUSED
		}
		return f, nil
	}
	return -1, unix.EACCES // outside its read-write folders
}

// sockaddrUnix is a sockaddr_un for path.
func sockaddrUnix(path string) []byte {
	b := make([]byte, 2+len(path)+1)
	*(*uint16)(unsafe.Pointer(&b[0])) = unix.AF_UNIX
	copy(b[2:], path)
	return b
}

// rawConnect connects sock to the address as the server's memory held it.
func rawConnect(sock int, addr []byte) unix.Errno {
	var p unsafe.Pointer
	if len(addr) > 0 {
		p = unsafe.Pointer(&addr[0])
	}
	_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(p), uintptr(len(addr)))
	return e
}
