package mcp

// A stdio server's connection (stdioConn): started on pipes of its own,
// read a message at a time (Read), and closed as the MCP specification
// asks of a stdio client. How its output becomes messages is
// stdioframes.go; what it asks and what Rootkeeper writes back,
// stdioanswers.go.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"rootkeeper/mcp/rawio"
)

// stdioConn is Rootkeeper's end of a stdio server's pipes: newline-delimited
// JSON-RPC 2.0 with batches, framed, decoded and ended as the SDK's own
// stdio connection does it (CommandTransport), with one difference: each
// message is decoded in place. The SDK decodes every message two or three
// times through a stream decoder made for the purpose, each of which
// allocates 32 KiB: at fifty servers that was 81% of all the memory the
// client allocated (4.7 MB a grant, BenchmarkGrantToServer) and most of its
// garbage collection.
//
// Decoding matches keys exactly, as the SDK's does: a server cannot have
// "Method" read as "method".
//
// The server's requests are bounded by a Backlog: those read and not yet
// answered (their answers written to its stdin) are counted, and while
// the backlog is full the next message is not read, so that a server
// asking faster than it reads its answers waits to write; the SDK would
// otherwise hold every request it read, with its handler and its answer.
// A server whose backlog stays full with no answer drained for the stall
// limit asks and does not read: Read fails with a *HostileError, which
// onHostile hears first.
type stdioConn struct {
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	stdout    io.Closer     // closed once the server has exited, as StdoutPipe's by Wait
	terminate time.Duration // how long to wait for an exit before SIGTERM, then SIGKILL
	version   func() string // the protocol version negotiated, "" until then

	// The server's messages are read from frames in Read's own goroutine
	// when a Close ends a read waiting there (rawio's pipes), and handed
	// over from a goroutine of their own otherwise (incoming): that handover
	// was a goroutine woken for each message, a hundred a grant at fifty
	// servers. waiting is a read that Read gave up when its ctx ended (the
	// SDK's never does); the next Read takes its message.
	frames    *frameReader
	incoming  <-chan rawOrErr
	waiting   chan rawOrErr
	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error

	queue []jsonrpc.Message // the rest of a batch; Read is never concurrent

	writeMu sync.Mutex
	batchMu sync.Mutex
	batches map[jsonrpc.ID]*inBatch // requests of an incoming batch, until answered

	// roots, when set, answers the server's roots/list here (Read): it
	// calls reply, once, with the encoded result or the error to send
	// instead, before it returns or later from another goroutine (the
	// answer is written when reply is called); reply does not block.
	roots func(reply func(json.RawMessage, *jsonrpc.Error))

	backlog    *Backlog
	onHostile  func(error)        // told once when the server is found hostile; may be nil
	pendMu     sync.Mutex         // guards unanswered
	unanswered map[jsonrpc.ID]int // the server's requests not yet answered, with their sizes
}

// startStdio starts cmd and connects to its stdin and stdout. limits bound
// the server's unanswered requests (zero fields take the defaults);
// onHostile, if not nil, is told when the server is found hostile.
func startStdio(cmd *exec.Cmd, terminate time.Duration, version func() string, limits BacklogLimits, onHostile func(error)) (*stdioConn, error) {
	// Pipes of our own (package rawio), read and written without the
	// scheduler's system call path: a grant's fifty list_changed, requests
	// and answers woke its monitor thread every time.
	stdin, inR, stdout, outW, err := rawio.Pipes()
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = StartServer(cmd)
	inR.Close()
	outW.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		return nil, err
	}
	if terminate <= 0 {
		terminate = 5 * time.Second // the SDK's default
	}
	c := &stdioConn{cmd: cmd, stdin: stdin, stdout: stdout, terminate: terminate, version: version, closed: make(chan struct{}),
		backlog: NewBacklog(limits), onHostile: onHostile, unanswered: map[jsonrpc.ID]int{}}
	c.frames = newFrameReader(stdout, MaxMessageBytes)
	if !rawio.Interrupts(stdout) {
		c.incoming = readFrames(c.frames, c.closed)
	}
	return c, nil
}

// SessionID is empty: a stdio connection has no session id.
func (c *stdioConn) SessionID() string { return "" }

// Read returns the next message from the server. A roots/list (alone on
// its line) is answered here when the connection has a roots answer, and
// not returned: the next message is.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, answered, err := c.read(ctx)
		if !answered {
			return msg, err
		}
	}
}

// read is Read, which it calls again while answered.
func (c *stdioConn) read(ctx context.Context) (_ jsonrpc.Message, answered bool, _ error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if len(c.queue) > 0 {
		next := c.queue[0]
		c.queue = c.queue[1:]
		return next, false, nil
	}
	// Room for what the next message may ask, or wait until answers drain.
	if err := c.backlog.Wait(ctx, c.closed); err != nil {
		if IsHostile(err) && c.onHostile != nil {
			c.onHostile(err)
		}
		return nil, false, err
	}
	raw, err := c.nextFrame(ctx)
	if err != nil {
		return nil, false, err
	}
	if c.roots != nil {
		if req, ok := rootsListRequest(raw); ok {
			return nil, true, c.answerRoots(req, len(raw))
		}
	}
	msgs, batch, err := decodeFrame(raw)
	if err != nil {
		return nil, false, err
	}
	if req, ok := msgs[0].(*jsonrpc.Request); ok && !batch && c.roots != nil && isRootsList(req) {
		return nil, true, c.answerRoots(req, len(raw))
	}
	if batch {
		if v := c.version(); v >= "2025-06-18" {
			return nil, false, fmt.Errorf("JSON-RPC batching is not supported in 2025-06-18 and later (the session's version: %s)", v)
		}
		if err := c.addBatch(msgs); err != nil {
			return nil, false, err
		}
	}
	if err := c.countRequests(msgs, len(raw)); err != nil {
		return nil, false, err
	}
	c.queue = msgs[1:]
	return msgs[0], false, nil
}

// Close ends the connection the way the MCP specification asks of a stdio
// client: it closes the server's input and waits for it to exit, sends
// SIGTERM if it does not within the terminate duration, and SIGKILL after
// as long again. (The adapter's StopProcess also ends the server's process
// group.)
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.stop()
		close(c.closed)
		// A descendant may hold the server's stdout: the reader ends now
		// (a read it ends is the end of the input: closed first).
		c.stdout.Close()
	})
	return c.closeErr
}

// stop is Close's work: it closes the server's input and waits for it to
// exit, then sends SIGTERM, then SIGKILL.
func (c *stdioConn) stop() error {
	if err := c.stdin.Close(); err != nil {
		return fmt.Errorf("closing stdin: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-exited:
			return err, true
		case <-time.After(c.terminate):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if c.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := c.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("the server does not exit")
}
