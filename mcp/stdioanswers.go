package mcp

// What a stdio server asks and what Rootkeeper writes back to it: a
// roots/list answered in the connection itself (answerRoots), the
// server's requests counted against its backlog until their answers are
// written (countRequests, settle), a batch's answers sent together
// (addBatch, answered), and every message Rootkeeper sends (Write).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/mcp/rawio"
)

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

// inBatch is a batch of requests the server sent: their answers go back
// together, in the batch's order, once the last is ready.
type inBatch struct {
	index     map[jsonrpc.ID]int
	responses []*jsonrpc.Response
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

// encodeBatch encodes a batch's answers as one JSON array, in the
// batch's order.
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
