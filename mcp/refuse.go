package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK rewrites any -32601 a request handler returns into its own
// "method not found: METHOD" without data (internal/jsonrpc2 processResult,
// go-sdk v1.8.0), so the receiving middleware cannot send the refusal the
// specification gives for a client without roots. These wrappers put it
// back on the way out: every -32601 answer to roots/list becomes
// ErrRootsNotSupported. (The middleware answers -32601 only in that case.)

// refusingTransport wraps the connections of a transport whose Connection
// has no optional methods the SDK looks for (stdio, in-memory, sse).
type refusingTransport struct{ inner sdk.Transport }

func (t *refusingTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &refusingConn{Connection: c, pending: map[jsonrpc.ID]bool{}}, nil
}

type refusingConn struct {
	sdk.Connection
	mu      sync.Mutex
	pending map[jsonrpc.ID]bool // ids of roots/list requests not yet answered
}

func (c *refusingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == methodListRoots && req.IsCall() {
		c.mu.Lock()
		c.pending[req.ID] = true
		c.mu.Unlock()
	}
	return msg, err
}

func (c *refusingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		roots := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if roots && isMethodNotFound(resp.Error) {
			msg = &jsonrpc.Response{ID: resp.ID, Error: ErrRootsNotSupported()}
		}
	}
	return c.Connection.Write(ctx, msg)
}

func isMethodNotFound(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && werr.Code == CodeMethodNotFound
}

// refusingRoundTripper does the same for streamable HTTP, whose Connection
// cannot be wrapped (the SDK calls unexported methods on it): it rewrites
// the body of the POST that carries the SDK's answer to roots/list.
type refusingRoundTripper struct{ base http.RoundTripper }

// sdkRootsRefusal is the message the SDK puts in place of ours.
const sdkRootsRefusal = `method not found: "roots/list"`

func (t *refusingRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.Body != nil && r.GetBody != nil {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		if bytes.Contains(body, []byte(`-32601`)) {
			body = rewriteRefusal(body)
		}
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	return t.base.RoundTrip(r)
}

func rewriteRefusal(body []byte) []byte {
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Error == nil || msg.Error.Code != CodeMethodNotFound || msg.Error.Message != sdkRootsRefusal {
		return body
	}
	refusal := ErrRootsNotSupported()
	out, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{
		"code": refusal.Code, "message": refusal.Message, "data": refusal.Data,
	}})
	if err != nil {
		return body
	}
	return out
}
