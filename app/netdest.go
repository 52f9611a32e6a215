package app

// A destination of a confined server's network, as a person names it and
// as the setting's entries (only, allow, deny) match it: NAME:PORT,
// *.NAME:PORT, IP:PORT, [IPv6]:PORT, unix:/PATH.

import (
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A NetContact is one contact of a confined server past its sandbox, in
// app's words (mcp/confine's Contact): a TCP connect, with the name the
// server looked up when Rootkeeper's resolver answered it, or a connect
// to a unix socket past its folders.
type NetContact struct {
	// Proto is "tcp" or "unix".
	Proto string
	Name  string
	Addr  netip.AddrPort
	Path  string
}

// The protocols of a destination.
const (
	ProtoTCP    = "tcp"
	ProtoUnix   = "unix"
	ProtoLookup = "dns" // a name looked up (and refused): no address yet
)

// Dest is the destination as a person recognises it: "api.tavily.com:443"
// (the name the server looked up), else "203.0.113.7:443" or
// "[2001:db8::1]:443", or "unix:/run/postgresql/.s.PGSQL.5432". It is
// also the entry that allows or denies exactly it.
func (c NetContact) Dest() string {
	switch c.Proto {
	case ProtoUnix:
		return "unix:" + c.Path
	case ProtoLookup:
		return strings.ToLower(c.Name) + ":*"
	}
	if c.Name != "" {
		return strings.ToLower(strings.TrimSuffix(c.Name, ".")) + ":" + strconv.Itoa(int(c.Addr.Port()))
	}
	return netip.AddrPortFrom(c.Addr.Addr().Unmap(), c.Addr.Port()).String()
}

// A destPattern is a destination entry read (ParseDestination).
type destPattern struct {
	unix     string     // unix:PATH
	name     string     // NAME, or the suffix of *.NAME (lower case)
	wildcard bool       // *.NAME: any name below NAME
	addr     netip.Addr // IP
	port     int        // 0: any port (*)
}

// destHelp is what a destination may be, for the error that refuses one.
const destHelp = "want NAME:PORT, *.NAME:PORT, IP:PORT, [IPv6]:PORT or unix:/PATH; PORT may be *"

// ParseDestination reads a destination entry — NAME:PORT, *.NAME:PORT
// (any name below NAME), IP:PORT, [IPv6]:PORT (PORT may be *) or
// unix:/PATH — and returns it written the one way it is stored (names
// in lower case, addresses as netip writes them, paths cleaned).
func ParseDestination(s string) (string, error) {
	p, err := parseDest(s)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

func parseDest(s string) (destPattern, error) {
	bad := func() (destPattern, error) {
		return destPattern{}, inputErrorf("bad destination %q (%s)", s, destHelp)
	}
	if rest, ok := strings.CutPrefix(s, "unix:"); ok {
		if !filepath.IsAbs(rest) || strings.ContainsAny(rest, "\x00\n") {
			return bad()
		}
		return destPattern{unix: filepath.Clean(rest)}, nil
	}
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return bad()
	}
	host, portText := s[:i], s[i+1:]
	var p destPattern
	if portText != "*" {
		n, err := strconv.Atoi(portText)
		if err != nil || n < 1 || n > 65535 || portText[0] == '+' || portText[0] == '0' {
			return bad()
		}
		p.port = n
	}
	if h, ok := strings.CutPrefix(host, "["); ok {
		h, ok = strings.CutSuffix(h, "]")
		a, err := netip.ParseAddr(h)
		if !ok || err != nil || !a.Is6() || a.Zone() != "" {
			return bad()
		}
		p.addr = a.Unmap()
		return p, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if !a.Is4() {
			return bad() // an IPv6 address is written in brackets
		}
		p.addr = a
		return p, nil
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		p.wildcard, host = true, rest
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if !validHostname(host) {
		return bad()
	}
	p.name = host
	return p, nil
}

// validHostname reports whether h is a DNS name: labels of letters,
// digits, hyphens and underscores, none empty nor longer than 63, at most
// 253 in all.
func validHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// String is the pattern as stored.
func (p destPattern) String() string {
	port := "*"
	if p.port != 0 {
		port = strconv.Itoa(p.port)
	}
	switch {
	case p.unix != "":
		return "unix:" + p.unix
	case p.addr.IsValid() && p.addr.Is6():
		return "[" + p.addr.String() + "]:" + port
	case p.addr.IsValid():
		return p.addr.String() + ":" + port
	case p.wildcard:
		return "*." + p.name + ":" + port
	}
	return p.name + ":" + port
}

// ParseDestinations reads entries (ParseDestination), dropping repeats;
// every bad one is named in one error.
func ParseDestinations(entries []string) ([]string, error) {
	var out, bad []string
	for _, e := range entries {
		d, err := ParseDestination(e)
		if err != nil {
			bad = append(bad, strconv.Quote(e))
			continue
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	switch len(bad) {
	case 0:
		return out, nil
	case 1:
		return nil, inputErrorf("bad destination %s (%s)", bad[0], destHelp)
	}
	return nil, inputErrorf("bad destinations %s (%s)", strings.Join(bad, ", "), destHelp)
}

// matches reports whether contact c is p. A name is known only where the
// server looked it up through Rootkeeper's resolver; where it was not
// (a server sharing the host's network), resolve, when not nil, gives a
// name's addresses as the host resolves them, and a NAME entry matches an
// address among them.
func (p destPattern) matches(c NetContact, resolve func(string) []netip.Addr) bool {
	if c.Proto == ProtoUnix || p.unix != "" {
		return c.Proto == ProtoUnix && p.unix == c.Path
	}
	if c.Proto == ProtoLookup {
		return p.couldName(c.Name)
	}
	if p.port != 0 && p.port != int(c.Addr.Port()) {
		return false
	}
	if p.addr.IsValid() {
		return p.addr == c.Addr.Addr().Unmap()
	}
	name := strings.ToLower(strings.TrimSuffix(c.Name, "."))
	if name != "" {
		return p.nameMatches(name)
	}
	if resolve != nil && !p.wildcard {
		return slices.Contains(resolve(p.name), c.Addr.Addr().Unmap())
	}
	return false
}

func (p destPattern) nameMatches(name string) bool {
	if p.wildcard {
		return strings.HasSuffix(name, "."+p.name)
	}
	return name == p.name
}

// couldName reports whether a connect to some address of name could match
// p: a lookup of name is then worth letting through.
func (p destPattern) couldName(name string) bool {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	return p.name != "" && p.nameMatches(name)
}

// covers reports whether every contact d matches is one p matches too: a
// socket at or below p's path, a name p matches (a *.NAME of d below p's),
// the address p names; on p's port, or on any when p's is *.
func (p destPattern) covers(d destPattern) bool {
	if p.port != 0 && p.port != d.port {
		return false
	}
	switch {
	case p.unix != "" || d.unix != "":
		return p.unix != "" && d.unix != "" && (p.unix == d.unix || strings.HasPrefix(d.unix, p.unix+"/"))
	case p.addr.IsValid() || d.addr.IsValid():
		return p.addr.IsValid() && p.addr == d.addr
	case d.wildcard:
		return p.wildcard && (d.name == p.name || strings.HasSuffix(d.name, "."+p.name))
	}
	return p.nameMatches(d.name)
}

// anyMatches reports whether one of entries matches c (entries that do not
// parse match nothing).
func anyMatches(entries []string, c NetContact, resolve func(string) []netip.Addr) bool {
	for _, e := range entries {
		if p, err := parseDest(e); err == nil && p.matches(c, resolve) {
			return true
		}
	}
	return false
}
