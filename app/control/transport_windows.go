//go:build windows

package control

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// pipePrefix begins the name of every control pipe.
const pipePrefix = `\\.\pipe\rootkeeper-control-`

// userSID is the SID of the user this process runs as.
var userSID = sync.OnceValues(func() (*windows.SID, error) {
	tok, err := windows.OpenCurrentProcessToken()
	if err != nil {
		return nil, err
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	if err != nil {
		return nil, err
	}
	return u.User.Sid.Copy()
})

// pipeName is the control pipe of state folder dir for this user:
// pipePrefix and a hash of the user's SID and the folder (absolute, links
// resolved, case folded as Windows compares paths). Pipe names are one
// namespace for the whole machine: each user and each state folder gets a
// pipe of its own, and the name says neither.
func pipeName(dir string) (string, error) {
	sid, err := userSID()
	if err != nil {
		return "", fmt.Errorf("control pipe: who is this user: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("control pipe: %w", err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	sum := sha256.Sum256([]byte(sid.String() + "\n" + strings.ToUpper(filepath.Clean(abs))))
	return pipePrefix + hex.EncodeToString(sum[:16]), nil
}

// securityDescriptor admits the user alone: owned by the user, one access
// entry, for the user, and no inherited ones. (Remote clients are refused
// by the pipe itself: go-winio makes it with FILE_PIPE_REJECT_REMOTE_CLIENTS.)
func securityDescriptor() (string, error) {
	sid, err := userSID()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("O:%[1]sD:P(A;;GA;;;%[1]s)", sid), nil
}

// listen makes the control pipe of dir. It fails when the pipe exists
// already, made by another process (of this user or another one).
func listen(dir string) (net.Listener, error) {
	name, err := pipeName(dir)
	if err != nil {
		return nil, err
	}
	sd, err := securityDescriptor()
	if err != nil {
		return nil, fmt.Errorf("control pipe: %w", err)
	}
	// Buffers that hold a whole request and a short answer: a write to the
	// pipe then ends without waiting for the other side to read it (Wine
	// makes a pipe without them block every write until it is read).
	ln, err := winio.ListenPipe(name, &winio.PipeConfig{
		SecurityDescriptor: sd,
		InputBufferSize:    MaxRequest,
		OutputBufferSize:   MaxRequest,
	})
	if err != nil {
		return nil, fmt.Errorf("control pipe %s: %w", name, err)
	}
	takeFirstInstance(name)
	return ln, nil
}

// takeFirstInstance connects to the pipe once and hangs up. go-winio makes
// the pipe's first instance without read or write access, which Windows 8
// and later keep closed to clients (this then finds the pipe busy and does
// nothing); Wine, like Windows 7, lets a client connect to it, and nobody
// ever answers there: the first client would wait for its deadline
// (https://github.com/microsoft/go-winio/issues/173). Taken here, it is
// out of the way.
func takeFirstInstance(name string) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING, 0, 0)
	if err == nil {
		windows.CloseHandle(h)
	}
}

// unlisten has nothing to do: a pipe is gone with its last handle.
func unlisten(string) {}

// errNotUsers is a control pipe served by a process of another user: one
// who made the pipe first under this user's name, to be sent the token.
var errNotUsers = errors.New("the control pipe is not served by a process of this user")

// dial connects to the control pipe of dir, and only to one a process of
// this user serves.
func dial(ctx context.Context, dir string) (net.Conn, error) {
	name, err := pipeName(dir)
	if err != nil {
		return nil, err
	}
	conn, err := winio.DialPipeContext(ctx, name)
	if err != nil {
		return nil, err
	}
	if !pipeEndIsUser(conn, true) {
		conn.Close()
		return nil, fmt.Errorf("%s: %w", name, errNotUsers)
	}
	return conn, nil
}

// peerIsUser reports whether the client at the other end of a connection
// is a process of this user.
func peerIsUser(conn net.Conn) bool { return pipeEndIsUser(conn, false) }

// pipeEndIsUser reports whether the process at the other end of the pipe
// (its server, or its client) runs as this user. What cannot be told is
// not the user's.
func pipeEndIsUser(conn net.Conn, server bool) bool {
	f, ok := conn.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	h := windows.Handle(f.Fd())
	var pid uint32
	var err error
	if server {
		err = windows.GetNamedPipeServerProcessId(h, &pid)
	} else {
		err = windows.GetNamedPipeClientProcessId(h, &pid)
	}
	if err != nil {
		return false
	}
	return processIsUser(pid)
}

// processIsUser reports whether process pid runs as this user. Reading a
// process's user needs no more than the limited query right, which an
// unelevated process has on an elevated one of the same user too.
func processIsUser(pid uint32) bool {
	own, err := userSID()
	if err != nil {
		return false
	}
	p, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(p)
	var tok windows.Token
	if err := windows.OpenProcessToken(p, windows.TOKEN_QUERY, &tok); err != nil {
		return false
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	if err != nil {
		return false
	}
	return windows.EqualSid(u.User.Sid, own)
}
