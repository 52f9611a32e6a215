package app

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"rootkeeper/app/words"
)

// A confined server's network is a setting of its own, like its folders:
// where its sockets may reach past its sandbox. mcp/confine enforces it
// (a network namespace of its own holding only loopback, Rootkeeper's
// resolver, every connect decided by the observer); this file says what
// the setting is and what it allows. A destination, and the entries that
// name destinations, are netdest.go; the record of what a server reached
// is netrecord.go; the questions at first contact are networkreq.go.

// NetworkMode is how a confined server's network is bounded.
type NetworkMode string

// The network modes.
const (
	// NetworkOff: no socket of it reaches anything outside its sandbox
	// (TCP, UDP, IPv4 and IPv6, loopback included); a unix socket past its
	// folders is refused, never asked about.
	NetworkOff NetworkMode = "off"
	// NetworkAsk: each destination not allowed yet is asked about at first
	// contact (allow once, allow always, deny); with nobody to ask it is
	// refused at once and the request waits for the person.
	NetworkAsk NetworkMode = "ask"
	// NetworkOnly: the destinations in Allow and nothing else; the rest is
	// asked about as in NetworkAsk, and only the names an entry could
	// match are looked up at all.
	NetworkOnly NetworkMode = "only"
	// NetworkOpen: every TCP destination is let through and recorded
	// (today's behaviour, watched). A unix socket past its folders is
	// refused as before, and recorded as a request the person may allow.
	NetworkOpen NetworkMode = "open"
)

// NetworkModes are the modes, from the narrowest.
var NetworkModes = []NetworkMode{NetworkOff, NetworkAsk, NetworkOnly, NetworkOpen}

// NetworkSetting is a server's network (Server.Network). Allow and Deny
// are destinations (ParseDestination): what `only` names and what the
// person allowed always, and what the person refused (remembered: never
// asked again). Deny wins over Allow; Off wins over both.
type NetworkSetting struct {
	Mode  NetworkMode `json:"mode"`
	Allow []string    `json:"allow,omitempty"`
	Deny  []string    `json:"deny,omitempty"`
}

// Clone is a deep copy of n (nil stays nil).
func (n *NetworkSetting) Clone() *NetworkSetting {
	if n == nil {
		return nil
	}
	c := *n
	c.Allow, c.Deny = slices.Clone(n.Allow), slices.Clone(n.Deny)
	return &c
}

// NetworkOf is srv's network setting: open for a server stored before
// there was one (state written by an earlier version keeps today's
// behaviour), watched.
func (s Server) NetworkOf() NetworkSetting {
	if s.Network == nil || s.Network.Mode == "" {
		n := NetworkSetting{Mode: NetworkOpen}
		if s.Network != nil {
			n.Allow, n.Deny = slices.Clone(s.Network.Allow), slices.Clone(s.Network.Deny)
		}
		return n
	}
	return *s.Network.Clone()
}

// ParseNetworkMode reads off, ask, only or open.
func ParseNetworkMode(s string) (NetworkMode, error) {
	m := NetworkMode(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(NetworkModes, m) {
		return m, nil
	}
	return "", inputErrorf("invalid network setting %q (want off, ask, only or open)", s)
}

// NetVerdict is what a server's network setting says of a contact.
type NetVerdict int

// The verdicts.
const (
	// NetAsk: ask the person (wait for the answer when someone can be
	// asked; with nobody, refuse now and record the request).
	NetAsk NetVerdict = iota
	// NetAllow: let it through.
	NetAllow
	// NetRefuse: refuse it, and ask nothing (off, or denied before).
	NetRefuse
	// NetRefuseAsk: refuse it now and record a request for the person,
	// never waiting (a unix socket of a server whose network is open: as
	// before there was a setting, but the person may allow it).
	NetRefuseAsk
)

// DecideContact is what srv's network setting says of contact c. sockets
// are the server's allowed socket slots (a unix socket named in its
// configuration and allowed like a folder); resolve is as for matches.
func DecideContact(srv Server, c NetContact, sockets []string, resolve func(string) []netip.Addr) NetVerdict {
	n := srv.NetworkOf()
	switch {
	case policyRefusesContact(c, resolve):
		return NetRefuse
	case n.Mode == NetworkOff:
		return NetRefuse
	case anyMatches(n.Deny, c, resolve):
		return NetRefuse
	case c.Proto == ProtoUnix && slices.Contains(sockets, c.Path):
		return NetAllow
	case anyMatches(n.Allow, c, resolve):
		return NetAllow
	case n.Mode == NetworkOpen && c.Proto == ProtoTCP:
		return NetAllow
	case n.Mode == NetworkOpen:
		return NetRefuseAsk
	}
	return NetAsk
}

// LookupAllowed reports whether srv may have name looked up at all: in
// mode only, a name some allowed entry could match (a lookup carries
// whatever its name spells, so a name nobody allowed never leaves the
// sandbox); a name denied on every port never; any other name in modes
// ask and open (its connect is decided then).
func LookupAllowed(srv Server, name string) bool {
	n := srv.NetworkOf()
	c := NetContact{Proto: ProtoLookup, Name: name}
	if policyRefusesLookup(name) {
		return false
	}
	for _, e := range n.Deny {
		if p, err := parseDest(e); err == nil && p.port == 0 && p.couldName(name) {
			return false
		}
	}
	switch n.Mode {
	case NetworkOff:
		return false
	case NetworkOnly:
		return anyMatches(n.Allow, c, nil)
	}
	return true
}

// modeRank orders the modes by what they let through.
var modeRank = map[NetworkMode]int{NetworkOff: 0, NetworkAsk: 1, NetworkOnly: 1, NetworkOpen: 2}

// NetworkNeedsRestart reports whether a server started under the network
// setting was must be started again to run under now: its network of its
// own (or none, when off) is made at its start, and what it was let
// reach then may still be connected. A change that only widens what it
// may reach (a destination allowed, a refusal withdrawn, ask to open)
// needs none: each contact is decided when it is made.
func NetworkNeedsRestart(was, now Server) bool {
	a, b := was.NetworkOf(), now.NetworkOf()
	if (a.Mode == NetworkOff) != (b.Mode == NetworkOff) || modeRank[b.Mode] < modeRank[a.Mode] {
		return true
	}
	// What open let through without a list: its TCP destinations.
	openLets := func(e string) bool { return a.Mode == NetworkOpen && !strings.HasPrefix(e, "unix:") }
	for _, e := range a.Allow {
		if !slices.Contains(b.Allow, e) && !openLets(e) {
			return true
		}
	}
	for _, e := range b.Deny {
		// Newly refused: a restart only where it could have been let
		// through before.
		if !slices.Contains(a.Deny, e) && (openLets(e) || slices.Contains(a.Allow, e)) {
			return true
		}
	}
	return false
}

// SameRunButNetwork reports whether a and b are the same server but for a
// network setting that changed without needing a restart
// (NetworkNeedsRestart): the process may go on, each contact decided as
// it is made.
func SameRunButNetwork(a, b Server) bool {
	if NetworkNeedsRestart(a, b) {
		return false
	}
	a.Network, b.Network = nil, nil
	return reflect.DeepEqual(a, b)
}

// NetworkText says srv's network as `status` and its card say it: the
// setting, and where it cannot be enforced as set. isolated and why are
// confine.Isolation's answer (whether servers get a network of their own
// here). confined says whether srv runs confined.
func NetworkText(srv Server, confined, isolated bool, why string) string {
	if srv.Type != TransportStdio {
		return "network: a remote server; Rootkeeper reaches it at its URL"
	}
	if !confined {
		return "network not bounded: the server is not confined"
	}
	n := srv.NetworkOf()
	var out string
	switch n.Mode {
	case NetworkOff:
		return "network off: no socket reaches anything outside its sandbox (TCP, UDP, loopback included)"
	case NetworkOpen:
		out = "network open, watched: every destination it reaches is listed"
	case NetworkAsk:
		out = "network ask: each new destination is asked at first contact"
	case NetworkOnly:
		out = "network only " + strings.Join(n.Allow, " ") + ": the rest is asked at first contact"
	}
	if n.Mode == NetworkAsk && len(n.Allow) > 0 {
		out += "; allowed " + strings.Join(n.Allow, " ")
	}
	if len(n.Deny) > 0 {
		out += "; denied " + strings.Join(n.Deny, " ")
	}
	if !isolated {
		switch n.Mode {
		case NetworkAsk, NetworkOnly:
			out += "; enforced for TCP connects only here, and names are not shown"
		default:
			out += "; names are not shown here"
		}
		if why != "" {
			out += " (" + why + ")"
		}
	}
	return words.SafeText(out)
}

// SetServerNetwork stores n as server's network setting, through
// PutServer like every other change of a server (home resolves ~ in its
// configuration, whose slots are found again). Its destinations are read
// and written the one way (ParseDestinations); a bad one is refused with
// an InputError naming it, and nothing changes.
func (s *State) SetServerNetwork(server string, n NetworkSetting, home string) error {
	srv, ok := s.Server(server)
	if !ok {
		return inputErrorf("no server %q", server)
	}
	if srv.Type != TransportStdio {
		return inputErrorf("server %q is remote (%s): only a stdio server's network is bounded (it is confined; a remote one is reached at its URL)", server, srv.Type)
	}
	if _, err := ParseNetworkMode(string(n.Mode)); err != nil {
		return err
	}
	var err error
	if n.Allow, err = ParseDestinations(n.Allow); err != nil {
		return err
	}
	if n.Deny, err = ParseDestinations(n.Deny); err != nil {
		return err
	}
	n.Allow = slices.DeleteFunc(n.Allow, func(e string) bool { return slices.Contains(n.Deny, e) })
	if n.Mode == NetworkOnly && len(n.Allow) == 0 {
		return inputErrorf("network only needs at least one destination for %q (%s)", server, destHelp)
	}
	srv.Network = &n
	_, err = s.PutServer(srv, PutOptions{Replace: true, Given: allSettings, Home: home, KeepDecisions: true})
	return err
}

// NetworkAllow adds dest (ParseDestination) to server's allowed
// destinations, and takes it off the denied ones ("allow always").
func (s *State) NetworkAllow(server, dest, home string) error {
	srv, ok := s.Server(server)
	if !ok {
		return inputErrorf("no server %q", server)
	}
	d, err := ParseDestination(dest)
	if err != nil {
		return err
	}
	if p, _ := parseDest(d); policyRefusesAllow(p) != nil {
		return policyRefusesAllow(p)
	}
	n := srv.NetworkOf()
	if n.Mode == NetworkOff {
		return inputErrorf("the network of %q is off: nothing is let through; set it to ask, only or open first", server)
	}
	n.Deny = slices.DeleteFunc(n.Deny, func(e string) bool { return e == d })
	if !slices.Contains(n.Allow, d) {
		n.Allow = append(n.Allow, d)
	}
	s.dropNetworkRequest(server, d)
	return s.SetServerNetwork(server, n, home)
}

// NetworkDeny adds dest to server's denied destinations, and takes it off
// the allowed ones: remembered, never asked again.
func (s *State) NetworkDeny(server, dest, home string) error {
	srv, ok := s.Server(server)
	if !ok {
		return inputErrorf("no server %q", server)
	}
	d, err := ParseDestination(dest)
	if err != nil {
		return err
	}
	n := srv.NetworkOf()
	n.Allow = slices.DeleteFunc(n.Allow, func(e string) bool { return e == d })
	if !slices.Contains(n.Deny, d) {
		n.Deny = append(n.Deny, d)
	}
	if n.Mode == NetworkOnly && len(n.Allow) == 0 {
		n.Mode = NetworkAsk // nothing left to be only: the rest is asked, as before
	}
	s.dropNetworkRequest(server, d)
	return s.SetServerNetwork(server, n, home)
}

// A KnownNetwork is what Rootkeeper knows of one server program's
// network: that it needs none (its default is then off), with where that
// was learned.
type KnownNetwork struct {
	Name     string
	Packages []string
	Programs []string
	Source   string
}

// KnownNetworks are the servers known to need no network: a new one is
// put with its network off (DefaultNetwork). Any other new server is
// open, watched, until the person pins it. Each row says where it was
// learned (the package's code at the version pinned in the tests); a
// server that runs commands, fetches URLs or talks to remotes is not here
// (everything fetches a URL in one tool, pdf loads PDFs from URLs, git
// pushes and fetches to whatever remotes a repository names, gopls
// downloads modules, desktop-commander runs what it is told).
var KnownNetworks = []KnownNetwork{
	{Name: "server-filesystem", Packages: []string{"@modelcontextprotocol/server-filesystem"}, Programs: []string{"mcp-server-filesystem"},
		Source: "@modelcontextprotocol/server-filesystem 2026.8.31, dist/*.js: files and folders only (fs), no fetch, http or net"},
	{Name: "server-memory", Packages: []string{"@modelcontextprotocol/server-memory"}, Programs: []string{"mcp-server-memory"},
		Source: "@modelcontextprotocol/server-memory 2026.8.31, dist/index.js: a graph in a local file, no fetch, http or net"},
	{Name: "sequential-thinking", Packages: []string{"@modelcontextprotocol/server-sequential-thinking"}, Programs: []string{"mcp-server-sequential-thinking"},
		Source: "@modelcontextprotocol/server-sequential-thinking 2026.8.31, dist/*.js: thoughts kept in memory, no fetch, http or net"},
	{Name: "sqlite", Packages: []string{"mcp-server-sqlite-npx"}, Programs: []string{"mcp-server-sqlite-npx"},
		Source: "mcp-server-sqlite-npx 0.8.0, dist/index.js: a local database file (sqlite3), no fetch, http or net"},
	{Name: "mcp-taskmanager", Packages: []string{"@kazuph/mcp-taskmanager"}, Programs: []string{"mcp-taskmanager"},
		Source: "@kazuph/mcp-taskmanager 1.1.1, dist/index.js: tasks in a local file, no fetch, http or net"},
	{Name: "obsidian", Packages: []string{"mcp-obsidian"}, Programs: []string{"mcp-obsidian"},
		Source: "mcp-obsidian 1.0.0, dist/index.js: a local vault's notes, no fetch, http or net"},
}

// launcherRegistries are the package registries of npx-style launchers:
// a server they run is fetched from there (at every start, since a
// confined server's package cache is its private one), so a server known
// to need no network gets only its launcher's registry instead of off.
var launcherRegistries = map[string][]string{
	"npx": {"registry.npmjs.org:443"}, "npm": {"registry.npmjs.org:443"}, "pnpx": {"registry.npmjs.org:443"},
	"pnpm": {"registry.npmjs.org:443"}, "bunx": {"registry.npmjs.org:443"}, "bun": {"registry.npmjs.org:443"},
	"yarn": {"registry.yarnpkg.com:443"},
	"uvx":  {"pypi.org:443", "files.pythonhosted.org:443"}, "uv": {"pypi.org:443", "files.pythonhosted.org:443"},
	"pipx": {"pypi.org:443", "files.pythonhosted.org:443"},
}

// DefaultNetwork is the network a new server is put with: off for a
// server known to need none (KnownNetworks) — or, run by an npx-style
// launcher, only that launcher's registry (the one its environment names,
// npm_config_registry, where it names one) — and open, watched, for any
// other. A remote server has none.
func DefaultNetwork(srv Server) *NetworkSetting {
	if srv.Type != TransportStdio {
		return nil
	}
	known := slices.ContainsFunc(KnownNetworks, func(k KnownNetwork) bool { return knownProgram(srv, k.Packages, k.Programs) })
	if !known {
		return &NetworkSetting{Mode: NetworkOpen}
	}
	regs, launcher := launcherRegistries[filepath.Base(srv.Command)]
	if !launcher {
		return &NetworkSetting{Mode: NetworkOff}
	}
	if r := registryOf(srv.Env); r != "" {
		regs = []string{r}
	}
	return &NetworkSetting{Mode: NetworkOnly, Allow: slices.Clone(regs)}
}

// registryOf is the npm registry an environment names (npm_config_registry,
// NPM_CONFIG_REGISTRY) as a destination, "" when none or not a URL.
func registryOf(env map[string]string) string {
	for _, k := range []string{"npm_config_registry", "NPM_CONFIG_REGISTRY"} {
		v := env[k]
		scheme, rest, ok := strings.Cut(v, "://")
		if !ok {
			continue
		}
		host, _, _ := strings.Cut(rest, "/")
		if _, _, err := splitHostPort(host); err != nil {
			port := "443"
			if scheme == "http" {
				port = "80"
			}
			host += ":" + port
		}
		if d, err := ParseDestination(host); err == nil {
			return d
		}
	}
	return ""
}

// splitHostPort is net.SplitHostPort for "host:port" without importing
// net: an error when there is no port.
func splitHostPort(s string) (string, string, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 || strings.HasSuffix(s, "]") {
		return "", "", fmt.Errorf("no port in %q", s)
	}
	return s[:i], s[i+1:], nil
}

// PinNetwork sets server's network to only what rec says it was let
// through to so far (NetworkRecord.Used), with what it was allowed
// before: Pin to these. A server that reached nothing is refused with an
// InputError, and nothing changes.
func (s *State) PinNetwork(server string, rec NetworkRecord, home string) error {
	srv, ok := s.Server(server)
	if !ok {
		return inputErrorf("no server %q", server)
	}
	n := srv.NetworkOf()
	used := rec.Used()
	if len(used) == 0 {
		return inputErrorf("%s has reached nothing yet: nothing to pin it to (its network stays %s)", server, n.Mode)
	}
	if n.Mode == NetworkOff {
		return inputErrorf("the network of %q is off: it reaches nothing, and pinning would open it; set it to ask, only or open first", server)
	}
	n.Mode = NetworkOnly
	for _, d := range used {
		if !slices.Contains(n.Allow, d) && !slices.Contains(n.Deny, d) {
			n.Allow = append(n.Allow, d)
		}
	}
	return s.SetServerNetwork(server, n, home)
}

// NetworkSettingText is a setting in a few words, as the audit log keeps
// it: "only api.x:443 unix:/run/db.sock", "open; denied evil.example:443".
func NetworkSettingText(n NetworkSetting) string {
	out := string(n.Mode)
	if len(n.Allow) > 0 && n.Mode != NetworkOff {
		if n.Mode != NetworkOnly {
			out += "; allowed"
		}
		out += " " + strings.Join(n.Allow, " ")
	}
	if len(n.Deny) > 0 {
		out += "; denied " + strings.Join(n.Deny, " ")
	}
	return out
}
