package mcp

// Reading a stdio server's messages: frames (one JSON value a line, at
// most MaxMessageBytes) read from its stdout by a frameReader (frames.go)
// and handed to Read (nextFrame), each decoded in place with its keys
// matched exactly (decodeFrame): a message, or a batch of them.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sjson "github.com/segmentio/encoding/json"
)

// rawOrErr is one frame read, or the error that ended the reading.
type rawOrErr struct {
	raw json.RawMessage
	err error
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
	var n jsonNesting
	for _, b := range data {
		if n.step(b) > 0 && n.depth > max {
			return fmt.Errorf("a message nested deeper than %d levels", max)
		}
	}
	return nil
}
