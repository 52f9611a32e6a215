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
//
// Every op but "ping" needs the token the app writes, when it starts
// listening, to STATE_DIR/control.token (mode 0600); Call sends it. The
// socket's mode and the peer's user id keep other users out; the token
// keeps out a process of the same user that cannot read the state folder:
// a confined server, which Landlock denies the state folder (and which
// below Landlock ABI 9 cannot make a unix socket at all), so that it can
// neither report a forged bridge session ("bridge") nor read the status or
// a server's resources. A bridge that Rootkeeper runs reads the token from
// the state folder it was given, as the command line does; handing it over
// in the environment instead would not work for bridges, which the hosts
// start. A program running unconfined as the same user can read the state
// file itself, so the token does not try to keep it out.
//
// A request is one line of at most MaxRequest bytes, sent within
// ReadTimeout of connecting; at most MaxConns connections are served at
// once, and more are answered "busy" and closed.
package control

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"rootkeeper/app/atomicfile"
)

// SocketName is the socket's file name inside the state folder.
const SocketName = "control.sock"

// TokenName is the token's file name inside the state folder.
const TokenName = "control.token"

// Bounds of what one client may make the app hold.
const (
	// MaxRequest is the longest request line, newline included.
	MaxRequest = 64 << 10
	// MaxConns is how many connections are served at once.
	MaxConns = 32
)

// ReadTimeout is how long a client has to send its request line after
// connecting (a variable for tests).
var ReadTimeout = 5 * time.Second

// openOps need no token: "ping" only says that an app runs.
var openOps = map[string]bool{"ping": true}

// ErrNotRunning says no app is listening in that state folder.
var ErrNotRunning = errors.New("no running Rootkeeper for this state folder")

// Handler answers one op. Its result is encoded as JSON.
type Handler func(ctx context.Context, args json.RawMessage) (any, error)

// StreamHandler serves an op that keeps its connection: after the answer
// {"ok":true} both sides exchange JSON lines on conn until one closes it or
// ctx ends (the app quits). The read deadline of the request line no
// longer applies; the handler bounds what it reads itself.
type StreamHandler func(ctx context.Context, args json.RawMessage, conn net.Conn) error

type request struct {
	Op    string          `json:"op"`
	Args  json.RawMessage `json:"args,omitempty"`
	Token string          `json:"token,omitempty"`
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
	streams  map[string]StreamHandler
	wg       sync.WaitGroup
	token    string
	slots    chan struct{}
}

// Listen creates the socket in dir. A socket left by a process that died is
// replaced; one with a live listener is an error (another app is running).
func Listen(dir string) (*Server, error) {
	path := filepath.Join(dir, SocketName)
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("another Rootkeeper is already running with state folder %s", dir)
	}
	token, err := writeToken(dir)
	if err != nil {
		return nil, err
	}
	ln, err := listenAt(path)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, path: path, handlers: map[string]Handler{}, streams: map[string]StreamHandler{}, token: token, slots: make(chan struct{}, MaxConns)}
	s.Handle("ping", func(context.Context, json.RawMessage) (any, error) { return "pong", nil })
	return s, nil
}

// writeToken writes a new random token to dir/control.token, mode 0600,
// replacing the file in one step (atomicfile), so that a reader never sees
// half a token.
func writeToken(dir string) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	token := hex.EncodeToString(b[:])
	if err := atomicfile.Write(filepath.Join(dir, TokenName), []byte(token), atomicfile.Options{Perm: 0o600}); err != nil {
		return "", fmt.Errorf("control token: %w", err)
	}
	return token, nil
}

// readToken reads the running app's token from dir ("" when missing).
func readToken(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, TokenName))
	if err != nil || len(b) > 256 {
		return ""
	}
	return strings.TrimSpace(string(b))
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

// HandleStream registers (or replaces) the stream handler for op; an op is
// a stream or a request, not both.
func (s *Server) HandleStream(op string, h StreamHandler) {
	s.mu.Lock()
	s.streams[op] = h
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
		if ctx.Err() != nil {
			os.Remove(filepath.Join(filepath.Dir(s.path), TokenName))
		}
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
		select {
		case s.slots <- struct{}{}:
		default:
			// Accepted in order, so the one past the bound is told.
			conn.SetDeadline(time.Now().Add(time.Second))
			writeResponse(conn, response{Error: fmt.Sprintf("busy: %d connections already", MaxConns)})
			conn.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer func() { <-s.slots; s.wg.Done() }()
			s.serveConn(ctx, conn)
		}()
	}
}

func writeResponse(conn net.Conn, resp response) {
	out, _ := json.Marshal(resp)
	conn.Write(append(out, '\n'))
}

// errTooLong is a request line past MaxRequest.
var errTooLong = fmt.Errorf("request longer than %d bytes", MaxRequest)

// readRequest reads one line of at most MaxRequest bytes.
func readRequest(conn net.Conn) ([]byte, error) {
	r := bufio.NewReaderSize(io.LimitReader(conn, MaxRequest), 4096)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) == MaxRequest:
			return nil, errTooLong
		default:
			return nil, err
		}
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
	conn.SetReadDeadline(time.Now().Add(ReadTimeout))
	conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	line, err := readRequest(conn)
	if err != nil {
		if errors.Is(err, errTooLong) {
			writeResponse(conn, response{Error: "bad request: " + err.Error()})
		}
		return
	}
	var req request
	resp := response{}
	if err := json.Unmarshal(line, &req); err != nil {
		resp.Error = "bad request: " + err.Error()
	} else if !openOps[req.Op] && subtle.ConstantTimeCompare([]byte(req.Token), []byte(s.token)) != 1 {
		resp.Error = fmt.Sprintf("op %q refused: no valid token (from %s in the state folder)", req.Op, TokenName)
	} else {
		s.mu.Lock()
		h, stream := s.handlers[req.Op], s.streams[req.Op]
		s.mu.Unlock()
		if stream != nil {
			resp.OK = true
			writeResponse(conn, resp)
			conn.SetDeadline(time.Time{})
			// The connection ends when the app does, even if the
			// handler is blocked reading it.
			stop := context.AfterFunc(ctx, func() { conn.Close() })
			defer stop()
			stream(ctx, req.Args, conn)
			return
		}
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
	writeResponse(conn, resp)
}

// Dial opens the stream op on the app running with state folder dir: it
// sends the request and reads the answer, and returns the connection, on
// which both sides then exchange JSON lines. The caller closes it.
func Dial(ctx context.Context, dir, op string, args any) (net.Conn, *bufio.Reader, error) {
	conn, r, err := roundTrip(ctx, dir, op, args, nil)
	if err != nil {
		return nil, nil, err
	}
	conn.SetDeadline(time.Time{})
	return conn, r, nil
}

// Call sends op to the app running with state folder dir and decodes its
// result into result (which may be nil). It returns ErrNotRunning when no app
// listens there.
func Call(ctx context.Context, dir, op string, args, result any) error {
	conn, _, err := roundTrip(ctx, dir, op, args, result)
	if conn != nil {
		conn.Close()
	}
	return err
}

// roundTrip sends one request and reads its answer into result (when not
// nil). It returns the connection, still open, and the reader that holds
// what followed the answer; on an error the connection is closed.
func roundTrip(ctx context.Context, dir, op string, args, result any) (_ net.Conn, _ *bufio.Reader, err error) {
	path := filepath.Join(dir, SocketName)
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, nil, ErrNotRunning
	}
	defer func() {
		if err != nil {
			conn.Close()
		}
	}()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	} else {
		conn.SetDeadline(time.Now().Add(10 * time.Second))
	}
	req := request{Op: op}
	if !openOps[op] {
		req.Token = readToken(dir)
	}
	if args != nil {
		if req.Args, err = json.Marshal(args); err != nil {
			return nil, nil, err
		}
	}
	data, _ := json.Marshal(req)
	if _, err = conn.Write(append(data, '\n')); err != nil {
		return nil, nil, fmt.Errorf("control socket: %w", err)
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadBytes('\n')
	if err != nil {
		return nil, nil, fmt.Errorf("control socket: %w", err)
	}
	var resp response
	if err = json.Unmarshal(line, &resp); err != nil {
		return nil, nil, fmt.Errorf("control socket: %w", err)
	}
	if !resp.OK {
		return nil, nil, errors.New(resp.Error)
	}
	if result != nil {
		if err = json.Unmarshal(resp.Result, result); err != nil {
			return nil, nil, err
		}
	}
	return conn, r, nil
}
