package mcp

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"golang.org/x/time/rate"
)

// CodeTooManyRequests is the JSON-RPC error a server gets for a request
// beyond its bounds (an implementation-defined server error code).
const CodeTooManyRequests = -32000

// gate bounds what one server may ask of Rootkeeper: how many of its
// requests (roots/list, sampling, elicitation, ping) are in flight at once,
// and how fast they come. A request beyond either bound is refused at once
// with a JSON-RPC error, before it reaches the audit log, a dialog or a
// model provider: one server cannot exhaust memory, fill the review queue or
// spend the person's tokens by asking in a loop.
type gate struct {
	inFlight chan struct{}
	limit    *rate.Limiter
	leave    func() // ends a request admitted: made once, not once a request
}

func newGate(maxInFlight int, perSecond float64, burst int) *gate {
	g := &gate{inFlight: make(chan struct{}, maxInFlight), limit: rate.NewLimiter(rate.Limit(perSecond), burst)}
	g.leave = func() { <-g.inFlight }
	return g
}

// enter admits one request, returning the function that ends it, or the
// error to answer instead.
func (g *gate) enter(method string) (done func(), err *jsonrpc.Error) {
	if !g.limit.Allow() {
		return nil, &jsonrpc.Error{Code: CodeTooManyRequests, Message: fmt.Sprintf("Rootkeeper: too many requests from this server (%s refused; at most %g a second)", method, float64(g.limit.Limit()))}
	}
	return g.enterUnmetered(method)
}

// enterUnmetered admits a request Rootkeeper itself asked for (the
// roots/list that follows its own list_changed): bounded in flight, not
// counted against the rate.
func (g *gate) enterUnmetered(method string) (done func(), err *jsonrpc.Error) {
	select {
	case g.inFlight <- struct{}{}:
		return g.leave, nil
	default:
		return nil, &jsonrpc.Error{Code: CodeTooManyRequests, Message: fmt.Sprintf("Rootkeeper: too many requests from this server in flight (%s refused; at most %d at once)", method, cap(g.inFlight))}
	}
}

// retryAfter is how long until the gate would admit a request again, as
// far as its rate goes (a request in flight ends on its own soon).
func (g *gate) retryAfter() time.Duration {
	r := g.limit.Reserve()
	d := r.Delay()
	r.Cancel()
	return max(d, 10*time.Millisecond)
}

// isNotification reports whether method names a notification, which has no
// answer to refuse with.
func isNotification(method string) bool { return strings.HasPrefix(method, "notifications/") }

// coalescer turns a storm of events into at most one call of fn per
// interval: the first event of a quiet period calls it at once, later ones
// within the interval are folded into one trailing call at its end.
type coalescer struct {
	interval time.Duration
	fn       func()

	mu      sync.Mutex
	last    time.Time
	pending bool
}

func (c *coalescer) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending {
		return
	}
	if wait := c.interval - time.Since(c.last); wait > 0 {
		c.pending = true
		time.AfterFunc(wait, func() {
			c.mu.Lock()
			c.pending = false
			c.last = time.Now()
			c.mu.Unlock()
			c.fn()
		})
		return
	}
	c.last = time.Now()
	go c.fn()
}

// MaxMessageBytes bounds one message from a remote server, as the SDK bounds
// a stdio line: a streamable HTTP reply with a JSON body is read whole, so
// a multi-gigabyte body would take the app down.
const MaxMessageBytes = 16 << 20

// errMessageTooLarge ends a reply body past MaxMessageBytes.
var errMessageTooLarge = fmt.Errorf("the server's reply is larger than %d MiB; refusing the rest", MaxMessageBytes>>20)

// limitedBodies wraps every JSON reply body so that reading past
// MaxMessageBytes fails. Event streams are left to the SDK, which bounds
// each event line itself.
type limitedBodies struct{ base http.RoundTripper }

func (t limitedBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		resp.Body = &limitedBody{ReadCloser: resp.Body, left: MaxMessageBytes}
	}
	return resp, nil
}

type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a larger one.
		var one [1]byte
		if n, _ := b.ReadCloser.Read(one[:]); n > 0 {
			return 0, errMessageTooLarge
		}
		return b.ReadCloser.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
