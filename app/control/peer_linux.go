package control

import (
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// peerIsUser reports whether the process at the other end of a unix socket
// connection runs as this process's user (SO_PEERCRED).
func peerIsUser(conn net.Conn) bool {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return true
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || credErr != nil {
		// Unknown credentials are not the owner's.
		return false
	}
	return int(cred.Uid) == os.Geteuid()
}
