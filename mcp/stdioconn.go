package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"

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

type rawOrErr struct {
	raw json.RawMessage
	err error
}

// inBatch is a batch of requests the server sent: their answers go back
// together, in the batch's order, once the last is ready.
type inBatch struct {
	index     map[jsonrpc.ID]int
	responses []*jsonrpc.Response
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

// nextFrame is the server's next message. A ctx that can end (the SDK's
// cannot) is given a read on a goroutine, which the next call takes over
// should ctx end first.
func (c *stdioConn) nextFrame(ctx context.Context) (json.RawMessage, error) {
	in := c.incoming
	if in == nil {
		if ctx.Done() == nil && c.waiting == nil {
			select {
			case <-c.closed:
				return nil, io.EOF
			default:
			}
			return c.frameOrEOF(c.frames.next())
		}
		if c.waiting == nil {
			c.waiting = make(chan rawOrErr, 1)
			go func(out chan<- rawOrErr) {
				raw, err := c.frames.next()
				out <- rawOrErr{raw: raw, err: err}
			}(c.waiting)
		}
		in = c.waiting
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case v := <-in:
		if in == c.waiting {
			c.waiting = nil
		}
		return c.frameOrEOF(v.raw, v.err)
	case <-c.closed:
		return nil, io.EOF
	}
}

// frameOrEOF is a read's result, whose error is the end of the input once
// the connection is closed (a read that Close ended).
func (c *stdioConn) frameOrEOF(raw json.RawMessage, err error) (json.RawMessage, error) {
	if err != nil {
		select {
		case <-c.closed:
			return nil, io.EOF
		default:
		}
	}
	return raw, err
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

// isRootsList reports whether req is a roots/list call whose params the
// SDK would take (none, null or an object of ListRootsParams' shape): one
// the connection may answer as the SDK's dispatch would.
func isRootsList(req *jsonrpc.Request) bool {
	if req.Method != methodListRoots || !req.IsCall() {
		return false
	}
	p := bytes.TrimSpace(req.Params)
	if len(p) == 0 || string(p) == "null" || string(p) == "{}" {
		return true
	}
	var params sdk.ListRootsParams
	return p[0] == '{' && json.Unmarshal(p, &params) == nil
}

// answerRoots answers the server's roots/list req (size bytes) with
// c.roots, as a response written from here once c.roots replies (which it
// may do later, from another goroutine: once the answer's audit line is
// written). It counts against the backlog like any request until its
// answer is written, and no goroutine waits to write it: an answer the
// server's stdin cannot take now (it does not read, or another write is
// under way) is written from a goroutine of its own, while this one goes
// on reading until the backlog is full and, if nothing drains, finds the
// server hostile. The error is that of a write made before it returns.
func (c *stdioConn) answerRoots(req *jsonrpc.Request, size int) error {
	if err := c.countRequests([]jsonrpc.Message{req}, size); err != nil {
		return err
	}
	// The reply may come on another goroutine, while or after this one
	// returns: only one that came before is this read's to report.
	var r struct {
		sync.Mutex
		returned bool
		err      error
	}
	c.roots(func(result json.RawMessage, rerr *jsonrpc.Error) {
		err := c.writeAnswer(req.ID, result, rerr)
		r.Lock()
		if !r.returned {
			r.err = err
		}
		r.Unlock()
	})
	r.Lock()
	defer r.Unlock()
	r.returned = true
	return r.err
}

// writeAnswer writes the answer to the server's roots/list id (result, or
// rerr instead) without waiting, and settles id once it is written.
func (c *stdioConn) writeAnswer(id jsonrpc.ID, result json.RawMessage, rerr *jsonrpc.Error) error {
	var line []byte
	if rerr != nil {
		data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: rerr})
		if err != nil {
			c.settle(id)
			return fmt.Errorf("encoding a message: %w", err)
		}
		line = append(data, '\n')
	} else {
		line = make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"result":}`)+24+len(result)+1)
		line = append(line, `{"jsonrpc":"2.0","id":`...)
		line = appendID(line, id)
		line = append(line, `,"result":`...)
		line = append(append(line, result...), "}\n"...)
	}
	tw, ok := c.stdin.(interface{ TryWrite([]byte) (int, error) })
	if !ok || !c.writeMu.TryLock() {
		// Another write is under way (to a server that may not be
		// reading): this one waits its turn elsewhere.
		go c.writeLater(id, line, false)
		return nil
	}
	n, err := tw.TryWrite(line)
	if errors.Is(err, rawio.ErrWouldBlock) {
		go c.writeLater(id, line[n:], true)
		return nil
	}
	c.writeMu.Unlock()
	c.settle(id)
	return err
}

// writeLater writes rest of the answer to id, waiting as long as the
// server does not read (locked: writeMu is held already, the answer's
// beginning written), and settles id.
func (c *stdioConn) writeLater(id jsonrpc.ID, rest []byte, locked bool) {
	if !locked {
		c.writeMu.Lock()
	}
	defer c.writeMu.Unlock()
	c.stdin.Write(rest)
	c.settle(id)
}

// listChangedLine is notifications/roots/list_changed as the SDK writes it
// on this connection (its Notify with empty RootsListChangedParams, encoded
// by Write): TestListChangedInTheConnectionIsTheSDKs.
var listChangedLine = []byte(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{}}` + "\n")

// notifyRootsChanged writes notifications/roots/list_changed to the
// server, as the SDK's Notify would through Write, without its dispatch: a
// grant to fifty servers went through it fifty times (a context with a
// timeout, the middleware, the params and the message encoded each time).
// Like any write, it waits while the server does not read.
func (c *stdioConn) notifyRootsChanged() error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.stdin.Write(listChangedLine)
	return err
}

// appendID appends id as JSON, as the SDK's encoder writes it (no HTML
// escapes).
func appendID(b []byte, id jsonrpc.ID) []byte {
	if v, ok := id.Raw().(int64); ok {
		return strconv.AppendInt(b, v, 10)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(id.Raw())
	return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
}

// countRequests adds the requests among msgs, read in a frame of size
// bytes, to the backlog. A batch may not ask more than the backlog holds:
// its answers go back together, so none of them could drain first.
func (c *stdioConn) countRequests(msgs []jsonrpc.Message, size int) error {
	calls := 0
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			calls++
		}
	}
	if calls == 0 {
		return nil
	}
	if limit := c.backlog.Limits().Requests; calls > limit {
		return fmt.Errorf("a batch of %d requests; at most %d may wait for answers at once", calls, limit)
	}
	each := size / calls
	c.pendMu.Lock()
	defer c.pendMu.Unlock()
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			if _, dup := c.unanswered[req.ID]; dup {
				continue // refused by the SDK without an answer
			}
			c.unanswered[req.ID] = each
			c.backlog.Add(each)
		}
	}
	return nil
}

// settle drains the answered requests ids from the backlog.
func (c *stdioConn) settle(ids ...jsonrpc.ID) {
	c.pendMu.Lock()
	defer c.pendMu.Unlock()
	for _, id := range ids {
		if size, ok := c.unanswered[id]; ok {
			delete(c.unanswered, id)
			c.backlog.Drain(size)
		}
	}
}

// addBatch notes the requests of an incoming batch, whose answers are sent
// together.
func (c *stdioConn) addBatch(msgs []jsonrpc.Message) error {
	b := &inBatch{index: map[jsonrpc.ID]int{}}
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			if _, dup := b.index[req.ID]; dup {
				return fmt.Errorf("a batch holds the request id %v twice", req.ID.Raw())
			}
			b.index[req.ID] = len(b.responses)
			b.responses = append(b.responses, nil)
		}
	}
	if len(b.responses) == 0 {
		return nil
	}
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	for id := range b.index {
		if _, ok := c.batches[id]; ok {
			return fmt.Errorf("a batch holds the request id %v, which is still being answered", id.Raw())
		}
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*inBatch{}
	}
	for id := range b.index {
		c.batches[id] = b
	}
	return nil
}

// answered records resp if it answers a request of a batch; it returns the
// batch's answers once all are in, and whether resp belonged to a batch.
func (c *stdioConn) answered(resp *jsonrpc.Response) ([]*jsonrpc.Response, bool) {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	delete(c.batches, resp.ID)
	b.responses[b.index[resp.ID]] = resp
	delete(b.index, resp.ID)
	if len(b.index) > 0 {
		return nil, true
	}
	return b.responses, true
}

// Write sends msg to the server as one line (a batch's answers together).
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	var data []byte
	var err error
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if all, inBatch := c.answered(resp); inBatch {
			if all == nil {
				return nil // the batch's other answers are not ready
			}
			defer func() {
				for _, r := range all {
					c.settle(r.ID)
				}
			}()
			data, err = encodeBatch(all)
		} else {
			// Given once written, or once it cannot be: either way the
			// server's request is no longer held.
			defer c.settle(resp.ID)
			data, err = jsonrpc.EncodeMessage(msg)
		}
	} else {
		data, err = jsonrpc.EncodeMessage(msg)
	}
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	_, err = c.stdin.Write(append(data, '\n'))
	return err
}

func encodeBatch(resps []*jsonrpc.Response) ([]byte, error) {
	out := []byte{'['}
	for i, r := range resps {
		data, err := jsonrpc.EncodeMessage(r)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, data...)
	}
	return append(out, ']'), nil
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

// wireMessage is a JSON-RPC message as it arrives. Method is raw so that a
// "method" key with an empty name is told from none.
type wireMessage struct {
	Version string          `json:"jsonrpc"`
	ID      any             `json:"id,omitempty"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *jsonrpc.Error  `json:"error,omitempty"`
}

// exact decodes keys as they are spelled, never another case.
const exact = sjson.DontMatchCaseInsensitiveStructFields

// maxDepth bounds the nesting of a message, as the SDK does.
const maxDepth = 1000

// decodeFrame decodes one frame: a message, or a batch of them.
func decodeFrame(raw []byte) (msgs []jsonrpc.Message, batch bool, err error) {
	if err := checkDepth(raw, maxDepth); err != nil {
		return nil, false, err
	}
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var parts []json.RawMessage
		if err := parse(raw, &parts); err != nil {
			return nil, true, err
		}
		if len(parts) == 0 {
			return nil, true, errors.New("an empty batch")
		}
		msgs = make([]jsonrpc.Message, 0, len(parts))
		for _, p := range parts {
			m, err := decodeMessage(p)
			if err != nil {
				return nil, true, err
			}
			msgs = append(msgs, m)
		}
		return msgs, true, nil
	}
	m, err := decodeMessage(raw)
	if err != nil {
		return nil, false, err
	}
	return []jsonrpc.Message{m}, false, nil
}

// decodeMessage decodes one JSON-RPC message: a request or notification if
// it has a method, else a response.
func decodeMessage(raw []byte) (jsonrpc.Message, error) {
	var w wireMessage
	if err := parse(raw, &w); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.Version != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", w.Version, "2.0")
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, err
	}
	if len(w.Method) > 0 {
		var method string
		if err := parse(w.Method, &method); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, errors.New("invalid request: a response without an id")
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error // never a typed nil
	}
	return resp, nil
}

// parse decodes raw into v with exact keys and nothing after the value.
func parse(raw []byte, v any) error {
	rest, err := sjson.Parse(raw, v, exact)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return errors.New("invalid trailing data after a message")
	}
	return nil
}

// checkDepth refuses JSON nested deeper than max (objects and arrays),
// skipping what is inside strings.
func checkDepth(data []byte, max int) error {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > max {
				return fmt.Errorf("a message nested deeper than %d levels", max)
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return nil
}
