package confine

import (
	"context"
	"os"
	"path/filepath"
	"rootkeeper/app"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The observer sees every connect of a confined server and does it
// itself. A unix socket connects to a socket file inside the server's
// read-write folders (what it made itself there: Landlock decides who may
// make one), or to one past them that its Network allows (a database's
// socket in /run, say: a contact like a TCP destination), never to an
// abstract address (Landlock's scoping, which would stop an abstract
// connect past the server's domain, does not bind Rootkeeper, which does
// the connect). Below Landlock ABI 9, where Landlock cannot stop a connect
// to a named unix socket, a datagram unix socket stays refused by the
// filter: one may send to any named socket, connected or not. A TCP
// connect is a contact too (connectInet).
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

// answerConnect does the server's connect (notification n), one of the
// maxConnecting it holds a place of, and answers it with what came of it.
func (o *Observer) answerConnect(fd int, n seccompNotif) {
	defer func() { <-o.connecting }()
	ctx, cancel := context.WithTimeout(context.Background(), o.Wait)
	e := o.connect(ctx, fd, &n)
	cancel()
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.fd == fd { // the listener is still the one the call came on
		o.answer(fd, n.id, e)
	}
}

// connect does the connect n asks for, as above, and returns its errno.
func (o *Observer) connect(ctx context.Context, fd int, n *seccompNotif) unix.Errno {
	if o.reachSet != nil {
		// Launched in process (confine.Start): the Network is set before
		// Start gives the Reach, and not before the server may connect.
		select {
		case <-o.reachSet:
		case <-ctx.Done():
			return unix.EINTR
		}
	}
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
	if !o.stillWaiting(fd, n.id) {
		return unix.EINTR
	}
	domain, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return errnoOf(err) // ENOTSOCK
	}
	switch domain {
	case unix.AF_UNIX:
		return o.connectUnix(ctx, pid, sock, addr)
	case unix.AF_INET, unix.AF_INET6:
		return o.connectInet(ctx, fd, n, sock, domain, addr)
	}
	return rawConnect(sock, addr) // netlink: the kernel, nothing past the sandbox
}

// connectUnix connects a unix socket to a socket file in the server's
// read-write folders, or to one past them its Network allows.
func (o *Observer) connectUnix(ctx context.Context, pid, sock int, addr []byte) unix.Errno {
	path, errno := o.unixTarget(pid, addr)
	if errno != 0 {
		return errno
	}
	target, err := o.openSocketFile(path)
	if err == unix.EACCES {
		// Past its folders: a destination.
		if !o.network().Contact(ctx, Contact{PID: pid, Proto: "unix", Path: path}) {
			return unix.EACCES
		}
		target, err = o.openSocketAnywhere(path)
	}
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(target)
	return rawConnect(sock, sockaddrUnix("/proc/self/fd/"+strconv.Itoa(target)))
}

// connectInet decides a TCP connect (a UDP or other one reaches nothing
// past a server's network of its own, and goes on as asked). In a network
// of its own, a connect to something listening inside the sandbox goes on;
// any other is a contact, and when its Network allows it Rootkeeper
// connects a socket of the host's network to the destination and hands it
// to the server in place of its own (hand_linux.go), or, where it cannot,
// dials the destination and connects the server's socket to the relay,
// which joins the two. Sharing the host's network, an allowed connect is
// made as asked.
func (o *Observer) connectInet(ctx context.Context, fd int, n *seccompNotif, sock, domain int, addr []byte) unix.Errno {
	pid := int(n.pid)
	sb := o.sandbox
	if sb != nil && isHanded(sock) {
		return connectHanded(addr)
	}
	dest, ok := inetAddr(addr)
	typ, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE)
	if !ok || err != nil || typ != unix.SOCK_STREAM {
		return rawConnect(sock, addr)
	}
	if sb != nil {
		switch {
		case sb.relay.Listens(dest):
			return unix.EACCES // the relay's own door is no destination
		case sb.mayListen(dest.Addr()) && sb.listensInside(dest):
			return rawConnect(sock, addr)
		}
	}
	c := Contact{PID: pid, Proto: "tcp", Addr: dest}
	if sb != nil {
		c.Name = sb.resolver.NameOf(dest.Addr())
	}
	if !o.network().Contact(ctx, c) {
		return unix.EACCES
	}
	if sb == nil {
		return rawConnect(sock, addr)
	}
	if e, handed := o.handConnected(fd, n, sock, domain, addr); handed {
		return e
	}
	return sb.carry(sock, domain, dest)
}

// network is the Network contacts go to.
func (o *Observer) network() Network {
	if o.Network == nil {
		return openNetwork{}
	}
	return o.Network
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
	o.grantMu.RLock()
	roots := append(append([]string(nil), o.granted...), o.writable...)
	o.grantMu.RUnlock()
	for _, w := range roots {
		if !app.IsWithin(path, w) || path == w {
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

// openSocketAnywhere opens path, a socket file past the server's folders
// that its Network allowed, O_PATH (following links, as a connect does,
// but no magic link); never one in a protected folder.
func (o *Observer) openSocketAnywhere(path string) (int, error) {
	f, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if unix.Fstat(f, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK || o.protected(location(f)) {
		unix.Close(f)
		return -1, unix.ECONNREFUSED
	}
	return f, nil
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
