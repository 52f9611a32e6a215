package sandboxnet

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"
)

// maxRelayed bounds the connections one relay carries at once; more are
// refused (a server cannot make Rootkeeper hold sockets without end).
const maxRelayed = 1024

// unclaimed is how long an accepted connection waits for its upstream
// before it is closed (the observer pairs it right after its connect).
var unclaimed = 10 * time.Second

// A Relay carries the connections a confined server was allowed: the
// server's socket is connected (by the observer) to one of the relay's
// listeners inside the sandbox, and what it sends goes to the upstream
// connection the observer dialled from outside, and back.
type Relay struct {
	ls []net.Listener

	mu       sync.Mutex
	upstream map[netip.AddrPort]net.Conn // dialled, waiting for the accept
	accepted map[netip.AddrPort]net.Conn // accepted, waiting for Pair
	carried  int
	closed   bool
	wg       sync.WaitGroup
}

// NewRelay serves ls (listeners inside the sandbox, on loopback) until
// Close.
func NewRelay(ls ...net.Listener) *Relay {
	r := &Relay{ls: ls, upstream: map[netip.AddrPort]net.Conn{}, accepted: map[netip.AddrPort]net.Conn{}}
	for _, l := range ls {
		r.wg.Add(1)
		go r.serve(l)
	}
	return r
}

// Addr is the relay's listener of the family of a (IPv4 or IPv6), and
// whether it has one.
func (r *Relay) Addr(v6 bool) (netip.AddrPort, bool) {
	for _, l := range r.ls {
		ap, err := netip.ParseAddrPort(l.Addr().String())
		if err == nil && ap.Addr().Is6() == v6 {
			return ap, true
		}
	}
	return netip.AddrPort{}, false
}

// Listens reports whether ap is one of the relay's own listeners.
func (r *Relay) Listens(ap netip.AddrPort) bool {
	for _, l := range r.ls {
		if got, err := netip.ParseAddrPort(l.Addr().String()); err == nil && got == ap {
			return true
		}
	}
	return false
}

// Pair joins the connection accepted from the sandbox address from (the
// server's socket, once connected to the relay) with upstream. It
// reports false, and closes upstream, when the relay is closed or full.
func (r *Relay) Pair(from netip.AddrPort, upstream net.Conn) bool {
	r.mu.Lock()
	if r.closed || r.carried >= maxRelayed {
		r.mu.Unlock()
		upstream.Close()
		return false
	}
	if c, ok := r.accepted[from]; ok {
		delete(r.accepted, from)
		r.carried++
		r.mu.Unlock()
		r.join(c, upstream)
		return true
	}
	r.upstream[from] = upstream
	r.mu.Unlock()
	time.AfterFunc(unclaimed, func() { r.drop(r.upstream, from, upstream) })
	return true
}

// Carried is how many connections the relay carries now.
func (r *Relay) Carried() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.carried
}

func (r *Relay) serve(l net.Listener) {
	defer r.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		from, err := netip.ParseAddrPort(c.RemoteAddr().String())
		if err != nil {
			c.Close()
			continue
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		r.mu.Lock()
		if up, ok := r.upstream[from]; ok && !r.closed {
			delete(r.upstream, from)
			r.carried++
			r.mu.Unlock()
			r.join(c, up)
			continue
		}
		if r.closed || len(r.accepted) >= maxRelayed {
			r.mu.Unlock()
			c.Close()
			continue
		}
		r.accepted[from] = c
		r.mu.Unlock()
		time.AfterFunc(unclaimed, func() { r.drop(r.accepted, from, c) })
	}
}

// drop closes c if it still waits in m under from.
func (r *Relay) drop(m map[netip.AddrPort]net.Conn, from netip.AddrPort, c net.Conn) {
	r.mu.Lock()
	if m[from] == c {
		delete(m, from)
		c.Close()
	}
	r.mu.Unlock()
}

// join copies between a (inside the sandbox) and b (outside) both ways,
// passing on each side's end, until both are done.
func (r *Relay) join(a, b net.Conn) {
	var done sync.WaitGroup
	pipe := func(dst, src net.Conn) {
		defer done.Done()
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else {
			dst.Close()
		}
	}
	done.Add(2)
	go pipe(a, b)
	go pipe(b, a)
	go func() {
		done.Wait()
		a.Close()
		b.Close()
		r.mu.Lock()
		r.carried--
		r.mu.Unlock()
	}()
}

// Close stops the relay's listeners and closes what waits; connections
// already carried go on until their ends.
func (r *Relay) Close() {
	r.mu.Lock()
	r.closed = true
	for k, c := range r.accepted {
		c.Close()
		delete(r.accepted, k)
	}
	for k, c := range r.upstream {
		c.Close()
		delete(r.upstream, k)
	}
	r.mu.Unlock()
	for _, l := range r.ls {
		l.Close()
	}
	r.wg.Wait()
}
