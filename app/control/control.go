// Package control is the local control channel of a running Rootkeeper: a
// unix socket, mode 0600, at STATE_DIR/control.sock. Another process (the
// command line, a second launch of the app) sends one JSON request line and
// reads one JSON response line:
//
//	→ {"op":"status"}
//	← {"ok":true,"result":{...}}
//
// The running app registers a handler per op ("status", "raise", ...). The
// socket is only a convenience: every state change still goes through the
// state file, which the app watches.
package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// SocketName is the socket's file name inside the state folder.
const SocketName = "control.sock"

// ErrNotRunning says no app is listening in that state folder.
var ErrNotRunning = errors.New("no running Rootkeeper for this state folder")

// Handler answers one op. Its result is encoded as JSON.
type Handler func(ctx context.Context, args json.RawMessage) (any, error)

type request struct {
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

type response struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// Server listens on the control socket.
type Server struct {
	ln       net.Listener
	path     string
	mu       sync.Mutex
	handlers map[string]Handler
	wg       sync.WaitGroup
}

// Listen creates the socket in dir. A socket left by a process that died is
// replaced; one with a live listener is an error (another app is running).
func Listen(dir string) (*Server, error) {
	path := filepath.Join(dir, SocketName)
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("another Rootkeeper is already running with state folder %s", dir)
	}
	ln, err := listenAt(path)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, path: path, handlers: map[string]Handler{}}
	s.Handle("ping", func(context.Context, json.RawMessage) (any, error) { return "pong", nil })
	return s, nil
}

// listenAt (re)creates the socket at path, mode 0600.
func listenAt(path string) (net.Listener, error) {
	os.Remove(path)
	// The state folder is 0700, so the moment between creating the socket
	// and narrowing it to 0600 exposes nothing. (Changing the umask instead
	// would race every other file this process creates.)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	return ln, nil
}

// Handle registers (or replaces) the handler for op.
func (s *Server) Handle(op string, h Handler) {
	s.mu.Lock()
	s.handlers[op] = h
	s.mu.Unlock()
}

// Serve answers connections until ctx ends, then removes the socket. When
// accepting fails it returns the error; called again (by the app's
// supervisor) it makes the socket anew.
func (s *Server) Serve(ctx context.Context) error {
	if s.ln == nil {
		ln, err := listenAt(s.path)
		if err != nil {
			return err
		}
		s.ln = ln
	}
	ln := s.ln
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer func() {
		s.wg.Wait()
		os.Remove(s.path)
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			ln.Close()
			s.ln = nil
			return fmt.Errorf("control socket: %w", err)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(ctx, conn)
		}()
	}
}

func (s *Server) serveConn(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	// The socket's mode already keeps other users out; the peer's
	// credentials are checked too, so that a socket reached through an
	// inherited descriptor or a loosened mode still answers only its owner.
	if uid, ok := peerUID(conn); ok && uid != os.Geteuid() {
		return
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return
	}
	var req request
	resp := response{}
	if err := json.Unmarshal(line, &req); err != nil {
		resp.Error = "bad request: " + err.Error()
	} else {
		s.mu.Lock()
		h := s.handlers[req.Op]
		s.mu.Unlock()
		if h == nil {
			resp.Error = fmt.Sprintf("unknown op %q", req.Op)
		} else if result, err := h(ctx, req.Args); err != nil {
			resp.Error = err.Error()
		} else if resp.Result, err = json.Marshal(result); err != nil {
			resp.Error = err.Error()
		} else {
			resp.OK = true
		}
	}
	out, _ := json.Marshal(resp)
	conn.Write(append(out, '\n'))
}

// Call sends op to the app running with state folder dir and decodes its
// result into result (which may be nil). It returns ErrNotRunning when no app
// listens there.
func Call(ctx context.Context, dir, op string, args, result any) error {
	path := filepath.Join(dir, SocketName)
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return ErrNotRunning
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	} else {
		conn.SetDeadline(time.Now().Add(10 * time.Second))
	}
	req := request{Op: op}
	if args != nil {
		if req.Args, err = json.Marshal(args); err != nil {
			return err
		}
	}
	data, _ := json.Marshal(req)
	if _, err := conn.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	var resp response
	if err := json.Unmarshal(line, &resp); err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	if !resp.OK {
		return errors.New(resp.Error)
	}
	if result != nil {
		return json.Unmarshal(resp.Result, result)
	}
	return nil
}
