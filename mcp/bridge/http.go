package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"rootkeeper/app"
	"rootkeeper/app/words"
	"rootkeeper/mcp"
)

// httpConn is the bridge's side of a server reached over HTTP: streamable
// HTTP (type http: each message POSTed, answers in the reply as JSON or an
// event stream, the server's own messages on a GET stream) or the older
// HTTP+SSE (type sse: one event stream, messages POSTed to the endpoint it
// names). What the server sends comes out of out as lines, for fromServer,
// exactly as from a stdio server; the host sees no difference.
type httpConn struct {
	b      *bridge
	srv    app.Server
	client *http.Client
	ctx    context.Context
	cancel context.CancelFunc

	outMu sync.Mutex
	out   *io.PipeWriter

	mu        sync.Mutex
	sessionID string
	endpoint  string        // sse: where to POST, once the stream named it
	ready     chan struct{} // sse: closed once endpoint is known (or the stream failed)
	listening bool          // http: the GET stream was started
	lastEvent string        // http: the GET stream's last event id, to resume
}

// startHTTP connects to server srv over HTTP and returns it as a
// serverProc without a process.
func (b *bridge) startHTTP(ctx context.Context) (*serverProc, error) {
	if _, err := url.Parse(b.srv.URL); err != nil {
		return nil, fmt.Errorf("rootkeeper bridge: server %q has a bad URL %q", b.srv.Name, b.hider.Hide(b.srv.URL))
	}
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	c := &httpConn{b: b, srv: b.srv, client: mcp.RelayHTTPClient(b.srv.URL, b.srv.Headers), ctx: ctx, cancel: cancel, out: pw, ready: make(chan struct{})}
	p := &serverProc{w: c, answers: c, exited: make(chan struct{}), halt: c.close}
	read := make(chan struct{})
	go func() {
		defer close(read)
		b.fromServer(p, pr)
	}()
	go func() {
		<-ctx.Done()
		pw.Close()
		<-read
		close(p.exited)
		if !p.replaced.Load() {
			select {
			case b.ended <- errors.New("the connection to the server ended"):
			default:
			}
		}
	}()
	if b.srv.Type == app.TransportSSE {
		go c.sseStream()
	}
	return p, nil
}

// close ends the session: streamable HTTP gets a DELETE for its session,
// as the protocol asks; every stream is closed.
func (c *httpConn) close() {
	c.mu.Lock()
	sid := c.sessionID
	c.mu.Unlock()
	if c.srv.Type == app.TransportHTTP && sid != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.srv.URL, nil)
		if err == nil {
			c.headers(req)
			if resp, err := c.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	c.cancel()
}

// emit hands one message from the server to fromServer, as a line.
func (c *httpConn) emit(data []byte) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return
	}
	// A line break in JSON can only be whitespace between tokens (strings
	// hold \n escaped): a space keeps the message one line, and the same
	// message.
	if bytes.ContainsAny(data, "\r\n") {
		data = bytes.Map(func(r rune) rune {
			if r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, data)
	}
	c.outMu.Lock()
	defer c.outMu.Unlock()
	c.out.Write(append(data, '\n'))
}

func (c *httpConn) writeJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.write(data)
}

// headers sets what every request to the server carries besides the
// configured headers (which the client adds for the server's origin).
func (c *httpConn) headers(req *http.Request) {
	c.mu.Lock()
	sid := c.sessionID
	c.mu.Unlock()
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	c.b.mu.Lock()
	version := c.b.session.ProtocolVersion
	initialized := c.b.initialized
	c.b.mu.Unlock()
	// The version header goes with every request after initialize (which
	// negotiates it); from 2026-07-28 on there is no initialize, and every
	// request carries it.
	if version != "" && (initialized || c.srv.Type == app.TransportHTTP && version >= "2026") {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
}

// write sends one line (a message or a batch) to the server. It returns an
// error only when the bridge is ending: a request the server cannot take
// gets a JSON-RPC error naming the server's URL instead, so that the host
// learns why.
func (c *httpConn) write(line []byte) error {
	if c.ctx.Err() != nil {
		return c.ctx.Err()
	}
	// A request other than initialize is sent on its own: a server that
	// answers in JSON holds the reply until the result is ready, and the
	// host's next messages (a cancellation, a ping) must not wait for it.
	// Initialize, notifications and responses go in order.
	// The caller's line is lent (lineReader.next); a request's body and a
	// refusal may outlive this call.
	line = bytes.Clone(line)
	if !bytes.Contains(line, []byte(`"`+methodInitialize+`"`)) && slices.ContainsFunc(splitBatch(line), func(m json.RawMessage) bool {
		_, ok := requestID(m)
		return ok
	}) {
		go c.post(line) // it fails only when the bridge ends
		return nil
	}
	return c.post(line)
}

// post sends one line to the server and hands its reply to fromServer.
func (c *httpConn) post(line []byte) error {
	target := c.srv.URL
	if c.srv.Type == app.TransportSSE {
		select {
		case <-c.ready:
		case <-time.After(30 * time.Second):
		case <-c.ctx.Done():
			return c.ctx.Err()
		}
		c.mu.Lock()
		target = c.endpoint
		c.mu.Unlock()
		if target == "" {
			c.refuse(line, errors.New("its event stream named no endpoint"))
			return nil
		}
	}
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, target, bytes.NewReader(line))
	if err != nil {
		c.refuse(line, err)
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c.headers(req)
	resp, err := c.client.Do(req)
	if err != nil {
		if c.ctx.Err() != nil {
			return c.ctx.Err()
		}
		c.refuse(line, err)
		return nil
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.mu.Lock()
		c.sessionID = sid
		c.mu.Unlock()
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		resp.Body.Close()
		c.refuse(line, fmt.Errorf("HTTP %s: %s", resp.Status, strings.TrimSpace(words.SafeText(string(snippet)))))
		return nil
	case strings.HasPrefix(ct, "text/event-stream"):
		go func() {
			defer resp.Body.Close()
			readSSE(resp.Body, func(_, _ string, data []byte) { c.emit(data) })
		}()
	case strings.HasPrefix(ct, "application/json"):
		go func() {
			defer resp.Body.Close()
			data, err := io.ReadAll(io.LimitReader(resp.Body, maxLine+1))
			if err != nil || len(data) > maxLine {
				c.refuse(line, fmt.Errorf("reading its reply: %v", orTooLong(err)))
				return
			}
			c.emit(data)
		}()
	default: // 202 Accepted, or nothing to say
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
	}
	if c.srv.Type == app.TransportHTTP && bytes.Contains(line, []byte(methodInitialized)) {
		c.mu.Lock()
		start := !c.listening
		c.listening = true
		c.mu.Unlock()
		if start {
			go c.listen()
		}
	}
	return nil
}

func orTooLong(err error) error {
	if err == nil {
		return fmt.Errorf("a message is longer than %d MiB", maxLine>>20)
	}
	return err
}

// hide replaces in s every secret the server's URL and headers hold (they
// come from the keyring only now: the person sees "(secret)" wherever the
// configuration is shown), as they are and as they appear inside errors.
func (c *httpConn) hide(s string) string { return c.b.hider.Hide(s) }

// refuse answers each request of line with a JSON-RPC error naming the
// server and why it could not take it.
func (c *httpConn) refuse(line []byte, why error) {
	why = errors.New(c.hide(why.Error()))
	c.b.log.Warn("the server could not take a message", "url", c.hide(c.srv.URL), "error", why)
	for _, m := range splitBatch(line) {
		if id, ok := requestID(m); ok {
			data, _ := json.Marshal(errorResponse(id, &jsonrpc.Error{Code: mcp.CodeInternalError,
				Message: fmt.Sprintf("rootkeeper bridge: server %q (%s): %v", c.srv.Name, c.hide(c.srv.URL), why)}))
			c.emit(data)
		}
	}
}

// listen keeps the GET event stream of a streamable HTTP session open, on
// which the server sends requests and notifications of its own (roots/list
// among them), resuming after a drop, until the bridge ends. A server that
// offers none (405) is not asked again.
func (c *httpConn) listen() {
	backoff := 100 * time.Millisecond
	for c.ctx.Err() == nil {
		req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.srv.URL, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		c.headers(req)
		c.mu.Lock()
		if c.lastEvent != "" {
			req.Header.Set("Last-Event-ID", c.lastEvent)
		}
		c.mu.Unlock()
		resp, err := c.client.Do(req)
		switch {
		case err != nil:
		case resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotFound:
			resp.Body.Close()
			return
		case resp.StatusCode/100 != 2 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"):
			resp.Body.Close()
		default:
			backoff = 100 * time.Millisecond
			readSSE(resp.Body, func(_, id string, data []byte) {
				if id != "" {
					c.mu.Lock()
					c.lastEvent = id
					c.mu.Unlock()
				}
				c.emit(data)
			})
			resp.Body.Close()
		}
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// sseStream is the one event stream of an HTTP+SSE server: its first
// event names the endpoint to POST to; the others are the server's
// messages. The session ends with the stream.
func (c *httpConn) sseStream() {
	defer c.cancel()
	named := false
	defer func() {
		if !named {
			close(c.ready)
		}
	}()
	req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.srv.URL, nil)
	if err != nil {
		return
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.client.Do(req)
	if err != nil {
		c.b.log.Warn("cannot reach the server", "url", c.hide(c.srv.URL), "error", c.hide(err.Error()))
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		c.b.log.Warn("the server refused its event stream", "url", c.hide(c.srv.URL), "status", resp.Status)
		return
	}
	base, _ := url.Parse(c.srv.URL)
	readSSE(resp.Body, func(event, _ string, data []byte) {
		switch event {
		case "endpoint":
			if named {
				return
			}
			u, err := base.Parse(strings.TrimSpace(string(data)))
			if err != nil || mcp.OriginOf(u) != mcp.OriginOf(base) {
				c.b.log.Warn("the server named an endpoint elsewhere; refused", "endpoint", string(data))
				return
			}
			c.mu.Lock()
			c.endpoint = u.String()
			c.mu.Unlock()
			named = true
			close(c.ready)
		case "", "message":
			c.emit(data)
		}
	})
}

// readSSE reads an event stream, calling on with each event's type, id and
// data, until the stream ends.
func readSSE(r io.Reader, on func(event, id string, data []byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		event, id string
		data      []byte
		has       bool
	)
	for {
		line, err := readRawLine(br)
		if err != nil {
			return err
		}
		if len(line) == 0 {
			if has {
				on(event, id, data)
			}
			event, data, has = "", nil, false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			event = string(value)
		case "id":
			id = string(value)
		case "data":
			if has {
				data = append(data, '\n')
			}
			data = append(data, value...)
			has = true
			if len(data) > maxLine {
				return fmt.Errorf("an event is longer than %d MiB", maxLine>>20)
			}
		}
	}
}

// readRawLine reads one line of any length up to maxLine, without its line
// ending.
func readRawLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > maxLine {
			return nil, fmt.Errorf("a line is longer than %d MiB", maxLine>>20)
		}
		buf = append(buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && (len(buf) == 0 || !errors.Is(err, io.EOF)) {
			return nil, err
		}
		// A last line without its newline counts; the next read says EOF.
		return bytes.TrimRight(buf, "\r\n"), nil
	}
}
