// Package sandboxnet serves the network of a confined server's sandbox
// from outside it: the resolver at the host's nameserver addresses
// inside the sandbox, which records the names a server looks up and the
// addresses they answer (so that a destination is shown as the name the
// server asked for, not only an address), and the relay that carries the
// connections Rootkeeper allowed from the server's own socket inside the
// sandbox to their destination outside.
//
// A confined server runs in a network namespace of its own that has only
// loopback (mcp/confine): nothing it sends leaves the sandbox by itself.
// Its resolver's queries reach Resolver, which asks the host's
// nameservers, and its connects reach the observer, which decides each
// destination, dials it from the host, and hands the dialled connection
// to Relay, to which the server's socket is then connected.
package sandboxnet

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// maxNames bounds the addresses a resolver remembers names for.
const maxNames = 4096

// maxInFlight bounds the queries a resolver answers at once.
const maxInFlight = 64

// A Resolver answers a sandbox's DNS queries by asking the host's
// nameservers, and remembers which name answered which address.
type Resolver struct {
	// Upstream are the nameservers asked, in order (the host's).
	Upstream []netip.AddrPort
	// Lookup decides whether a name is resolved at all; a name it refuses
	// is answered REFUSED and never leaves the sandbox (a lookup carries
	// whatever its name spells). nil resolves every name.
	Lookup func(name string) bool
	// Timeout bounds one upstream exchange (default 5 s).
	Timeout time.Duration

	mu       sync.Mutex
	names    map[netip.Addr]string
	order    []netip.Addr
	inFlight chan struct{}
	once     sync.Once
}

func (r *Resolver) init() {
	r.once.Do(func() {
		r.names = map[netip.Addr]string{}
		r.inFlight = make(chan struct{}, maxInFlight)
		if r.Timeout == 0 {
			r.Timeout = 5 * time.Second
		}
	})
}

// NameOf is the name whose lookup last answered a, "" if none did.
func (r *Resolver) NameOf(a netip.Addr) string {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.names[a.Unmap()]
}

// remember records that name answered addrs.
func (r *Resolver) remember(name string, addrs []netip.Addr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range addrs {
		a = a.Unmap()
		if _, ok := r.names[a]; !ok {
			r.order = append(r.order, a)
		}
		r.names[a] = name
	}
	for len(r.order) > maxNames {
		delete(r.names, r.order[0])
		r.order = r.order[1:]
	}
}

// ServeUDP answers the queries that come on pc until it is closed.
func (r *Resolver) ServeUDP(pc net.PacketConn) error {
	r.init()
	buf := make([]byte, 65535)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		q := append([]byte(nil), buf[:n]...)
		select {
		case r.inFlight <- struct{}{}:
		default:
			continue // too many at once: dropped, as a busy server drops them
		}
		go func() {
			defer func() { <-r.inFlight }()
			if ans := r.answer(q, "udp"); ans != nil {
				pc.WriteTo(ans, from)
			}
		}()
	}
}

// ServeTCP answers queries over the connections l accepts (DNS over TCP,
// which resolvers use for answers too long for a datagram) until l is
// closed.
func (r *Resolver) ServeTCP(l net.Listener) error {
	r.init()
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go r.serveConn(c)
	}
}

func (r *Resolver) serveConn(c net.Conn) {
	defer c.Close()
	for {
		c.SetDeadline(time.Now().Add(30 * time.Second))
		q, err := readTCPMessage(c)
		if err != nil {
			return
		}
		ans := r.answer(q, "tcp")
		if ans == nil || writeTCPMessage(c, ans) != nil {
			return
		}
	}
}

// answer is the response to query q, nil for something that is not a
// query (dropped).
func (r *Resolver) answer(q []byte, proto string) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil || h.Response {
		return nil
	}
	question, err := p.Question()
	if err != nil {
		return nil
	}
	name := strings.TrimSuffix(question.Name.String(), ".")
	if r.Lookup != nil && !r.Lookup(name) {
		return reply(h, question, dnsmessage.RCodeRefused)
	}
	ans, err := r.exchange(q, proto)
	if err != nil {
		return reply(h, question, dnsmessage.RCodeServerFailure)
	}
	if addrs := answered(ans); len(addrs) > 0 {
		r.remember(name, addrs)
	}
	return ans
}

// exchange asks the upstream nameservers q, in order, over proto.
func (r *Resolver) exchange(q []byte, proto string) ([]byte, error) {
	err := errors.New("no nameserver")
	for _, ns := range r.Upstream {
		var ans []byte
		if ans, err = exchangeWith(ns, q, proto, r.Timeout); err == nil {
			return ans, nil
		}
	}
	return nil, err
}

func exchangeWith(ns netip.AddrPort, q []byte, proto string, timeout time.Duration) ([]byte, error) {
	c, err := net.DialTimeout(proto, ns.String(), timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if proto == "tcp" {
		if err := writeTCPMessage(c, q); err != nil {
			return nil, err
		}
		return readTCPMessage(c)
	}
	if _, err := c.Write(q); err != nil {
		return nil, err
	}
	buf := make([]byte, 65535)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return nil, err
		}
		// The answer to this query, not a stray datagram.
		if n >= 2 && binary.BigEndian.Uint16(buf) == binary.BigEndian.Uint16(q) {
			return buf[:n], nil
		}
	}
}

// answered are the addresses in a response's answers.
func answered(ans []byte) []netip.Addr {
	var p dnsmessage.Parser
	if _, err := p.Start(ans); err != nil {
		return nil
	}
	if err := p.SkipAllQuestions(); err != nil {
		return nil
	}
	var out []netip.Addr
	for {
		h, err := p.AnswerHeader()
		if err != nil {
			return out
		}
		switch h.Type {
		case dnsmessage.TypeA:
			a, err := p.AResource()
			if err != nil {
				return out
			}
			out = append(out, netip.AddrFrom4(a.A))
		case dnsmessage.TypeAAAA:
			a, err := p.AAAAResource()
			if err != nil {
				return out
			}
			out = append(out, netip.AddrFrom16(a.AAAA))
		default:
			if err := p.SkipAnswer(); err != nil {
				return out
			}
		}
	}
}

// reply is a response to the query h, question with rcode and no answer.
func reply(h dnsmessage.Header, question dnsmessage.Question, rcode dnsmessage.RCode) []byte {
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, OpCode: h.OpCode, RecursionDesired: h.RecursionDesired, RecursionAvailable: true, RCode: rcode})
	b.EnableCompression()
	if b.StartQuestions() != nil || b.Question(question) != nil {
		return nil
	}
	msg, err := b.Finish()
	if err != nil {
		return nil
	}
	return msg
}

func readTCPMessage(c io.Reader) ([]byte, error) {
	var n [2]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return nil, err
	}
	msg := make([]byte, binary.BigEndian.Uint16(n[:]))
	_, err := io.ReadFull(c, msg)
	return msg, err
}

func writeTCPMessage(c io.Writer, msg []byte) error {
	out := binary.BigEndian.AppendUint16(make([]byte, 0, len(msg)+2), uint16(len(msg)))
	_, err := c.Write(append(out, msg...))
	return err
}
