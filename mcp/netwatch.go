package mcp

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/audit"
	"rootkeeper/mcp/confine"
)

// A NetWatch decides where one confined server's sockets may reach past
// its sandbox (confine.Network), as its network setting says
// (app.DecideContact), and keeps the record of what it reached
// (app.NetworkRecorder). A destination the setting does not decide is
// asked about at first contact like a folder at the moment of reach
// (ReachWatch): when a person can be asked (CanAsk) the connect waits for
// the answer, up to the wait the person set, with the other connects to
// it that come meanwhile; the answers are allow once (exactly the
// connects shown), allow always (the destination joins the server's
// allowed ones) and deny (remembered). With nobody to ask the connect is
// refused at once and the request waits in the state for the person.
// Every contact goes to the audit log (Via "network"); the log keeps
// requests and decisions and budgets the rest. The managed clients and
// the bridge use it alike.
type NetWatch struct {
	Server string
	Core   *app.Core
	Audit  *audit.Log // nil: none
	Log    *slog.Logger
	// CanAsk reports whether a person can be asked now; nil: nobody can.
	CanAsk func() bool
	// Limiter bounds the network requests raised (shared by the servers
	// of one process, apart from their folder requests'); nil: a limiter
	// of this watch's own.
	Limiter *app.ReachLimiter
	// Pending counts the requests being written in the background, so
	// that the owner can wait for them before it ends.
	Pending *Background
	// Record keeps what the server reached (the owner flushes it as it
	// ends: FlushNetworkRecords); nil: nothing is recorded.
	Record *app.NetworkRecorder
	// Isolated says the server has a network of its own (names known);
	// without one, a NAME the setting allows matches the addresses the
	// host resolves it to.
	Isolated bool
	// Witness notes the contacts refused, for the line that says why a
	// confined server stopped (nil: none).
	Witness *RunWitness

	once sync.Once
	// unasked writes the requests raised for nobody.
	unasked   unaskedRequests
	hostMu    sync.Mutex
	hostAddrs map[string]hostLookup // Isolated false: a name's addresses, as the host resolves it
}

// hostLookup is what the host resolved a name to, and when.
type hostLookup struct {
	addrs []netip.Addr
	at    time.Time
}

// NewNetWatch is the network watch of server, observed by this process,
// with its record in stateDir ("" for none).
func NewNetWatch(core *app.Core, al *audit.Log, log *slog.Logger, server, stateDir string) *NetWatch {
	w := &NetWatch{Server: server, Core: core, Audit: al, Log: log}
	w.Isolated, _ = confine.Isolation()
	if stateDir != "" {
		w.Record = recorderFor(core, stateDir, server, func(err error) {
			w.Log.Warn("cannot write the server's network record", "server", server, "error", err)
		})
	}
	return w
}

// recorders are the network records being kept by this process, one per
// state folder and server, whatever runs of it come and go: what they
// hold is written at most once a second, and all of it when the process
// is done with the folder (FlushNetworkRecords).
var recorders = struct {
	sync.Mutex
	by map[[2]string]*app.NetworkRecorder
}{by: map[[2]string]*app.NetworkRecorder{}}

// recorderFor is the recorder of server's record in stateDir, published
// in core as it is written.
func recorderFor(core *app.Core, stateDir, server string, onError func(error)) *app.NetworkRecorder {
	recorders.Lock()
	defer recorders.Unlock()
	key := [2]string{stateDir, server}
	r, ok := recorders.by[key]
	if !ok {
		r = &app.NetworkRecorder{StateDir: stateDir, Server: server}
		recorders.by[key] = r
	}
	r.SetHooks(core.SetNetworkRecord, onError)
	return r
}

// FlushNetworkRecords writes what the records of stateDir's servers hold
// now, and forgets their recorders: the managed clients and the bridge
// call it as they end.
func FlushNetworkRecords(stateDir string) {
	recorders.Lock()
	var mine []*app.NetworkRecorder
	for key, r := range recorders.by {
		if key[0] == stateDir {
			mine = append(mine, r)
			delete(recorders.by, key)
		}
	}
	recorders.Unlock()
	for _, r := range mine {
		r.Close()
	}
}

func (w *NetWatch) init() {
	w.once.Do(func() {
		if w.Limiter == nil {
			w.Limiter = app.NewReachLimiter()
		}
		if w.Log == nil {
			w.Log = slog.New(slog.DiscardHandler)
		}
		if w.Pending == nil {
			w.Pending = new(Background)
		}
	})
}

// Contact is confine.Network's: it decides c, and may wait while a
// person is asked (until ctx ends).
func (w *NetWatch) Contact(ctx context.Context, c confine.Contact) (allowed bool) {
	w.init()
	nc := app.NetContact{Proto: c.Proto, Name: c.Name, Addr: c.Addr, Path: c.Path}
	dest := nc.Dest()
	now := time.Now().UTC()
	e := audit.Entry{Time: now, Server: w.Server, Via: audit.ViaNetwork, Roots: []string{}, Tried: dest, Op: app.OpConnect, Decided: audit.ReachRefused}
	noted := true
	defer func() {
		w.audit(e)
		if noted && w.Record != nil {
			w.Record.Note(nc, allowed, now)
		}
		if !allowed {
			w.Witness.refusedContact(dest)
		}
	}()
	if c.Proto == app.ProtoUnix {
		if _, err := os.Lstat(c.Path); err != nil {
			// No socket there: nothing to ask about, nothing reached.
			e.Decided, noted = audit.ReachIgnored, false
			return false
		}
	}
	snap := w.Core.Snapshot()
	srv, ok := snap.State.Server(w.Server)
	if !ok {
		return false
	}
	verdict := app.DecideContact(srv, nc, w.sockets(snap, srv, nc), w.resolver())
	switch verdict {
	case app.NetAllow:
		e.Decided = audit.ReachAllowed
		return true
	case app.NetRefuse:
		return false
	}
	addr := ""
	if c.Proto == app.ProtoTCP && c.Name != "" {
		addr = netip.AddrPortFrom(c.Addr.Addr().Unmap(), c.Addr.Port()).String()
	}
	call := app.ReachCall{ID: newCallID(), Op: app.OpConnect, Path: dest}
	asking := verdict == app.NetAsk && w.CanAsk != nil && w.CanAsk()
	return w.ask(ctx, snap, nc, addr, call, asking, &e)
}

// ask raises (or joins) the request for dest and waits for the person's
// answer while someone can be asked; with nobody, it records the request
// and refuses at once.
func (w *NetWatch) ask(ctx context.Context, snap *app.Snapshot, nc app.NetContact, addr string, call app.ReachCall, asking bool, e *audit.Entry) bool {
	now, dest := e.Time, call.Path
	req, open := snap.State.Request(w.Server, dest)
	if open && len(req.Waiting(now)) == 0 {
		return false // asked before and not answered (or asked of nobody)
	}
	if !open && !asking {
		w.raiseUnasked(dest, addr, call, e)
		return false
	}
	if !open && !w.Limiter.Allow(w.Server, now) {
		e.Decided = audit.ReachLimited
		return false
	}
	var until time.Time
	if err := w.Core.Update(func(s *app.State) error {
		var err error
		until, err = s.AskNetwork(w.Server, dest, addr, call, now, asking)
		return err
	}); err != nil {
		w.Log.Error("cannot record the request", "server", w.Server, "destination", dest, "error", err)
		return false
	}
	if until.IsZero() {
		ok, _ := w.answer(w.Core.Snapshot(), nc, call, e)
		return ok
	}
	e.Request = !open
	changes, stop := w.Core.Subscribe()
	defer stop()
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	for {
		snap := w.Core.Snapshot()
		if ok, done := w.answer(snap, nc, call, e); done {
			return ok
		}
		if r, open := snap.State.Request(w.Server, dest); !open || !slices.ContainsFunc(r.Calls, func(c app.ReachCall) bool { return c.ID == call.ID }) {
			return false // answered without this connect
		}
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			e.Decided = audit.ReachTimedOut
			return false
		case <-changes:
		}
	}
}

// answer is what snap says of call: let through (allowed always, or once
// for this very connect) or refused (denied); done is false while the
// person has not answered.
func (w *NetWatch) answer(snap *app.Snapshot, nc app.NetContact, call app.ReachCall, e *audit.Entry) (ok, done bool) {
	srv, exists := snap.State.Server(w.Server)
	if !exists {
		return false, true
	}
	if _, once := snap.State.OnceFor(w.Server, call.ID); once {
		e.Decided = audit.ReachOnce
		return true, true
	}
	switch app.DecideContact(srv, nc, w.sockets(snap, srv, nc), w.resolver()) {
	case app.NetRefuse:
		e.Decided = audit.ReachRefused
		return false, true
	case app.NetAllow:
		e.Decided = audit.ReachAllowed
		return true, true
	}
	return false, false
}

// raiseUnasked raises the request for dest (reached at addr, "" for a
// lookup), on which no request is open, for a person who is not there
// (unaskedRequests): the call is refused now, and the request is written
// in the background for them to find; e says what became of it.
func (w *NetWatch) raiseUnasked(dest, addr string, call app.ReachCall, e *audit.Entry) {
	now := e.Time
	e.Decided, e.Request = w.unasked.raise(dest, func() bool { return w.Limiter.Allow(w.Server, now) }, w.Pending, func() {
		if err := w.Core.Update(func(s *app.State) error {
			_, err := s.AskNetwork(w.Server, dest, addr, call, now, false)
			return err
		}); err != nil {
			w.Log.Error("cannot record the request", "server", w.Server, "destination", dest, "error", err)
		}
	})
}

// Lookup is confine.Network's: whether the server may have name looked
// up (app.LookupAllowed). A name refused is recorded, audited, and in
// mode only raised as a request for the person (never waited for: the
// lookup is answered now).
func (w *NetWatch) Lookup(name string) bool {
	w.init()
	snap := w.Core.Snapshot()
	srv, ok := snap.State.Server(w.Server)
	if ok && app.LookupAllowed(srv, name) {
		return true
	}
	now := time.Now().UTC()
	nc := app.NetContact{Proto: app.ProtoLookup, Name: strings.ToLower(strings.TrimSuffix(name, "."))}
	dest := nc.Dest()
	e := audit.Entry{Time: now, Server: w.Server, Via: audit.ViaNetwork, Roots: []string{}, Tried: dest, Op: app.OpLookup, Decided: audit.ReachRefused}
	if ok && srv.NetworkOf().Mode == app.NetworkOnly && !slices.Contains(srv.NetworkOf().Deny, dest) {
		if _, open := snap.State.Request(w.Server, dest); !open {
			w.raiseUnasked(dest, "", app.ReachCall{ID: newCallID(), Op: app.OpLookup, Path: dest}, &e)
		}
	}
	w.audit(e)
	if w.Record != nil {
		w.Record.Note(nc, false, now)
	}
	return false
}

// sockets are the server's allowed unix socket slots: a socket its
// configuration names, allowed like a folder (app.SocketSlotPaths), by
// their paths as the server may name them (a link in the way resolved).
func (w *NetWatch) sockets(snap *app.Snapshot, srv app.Server, c app.NetContact) []string {
	out := app.SocketSlotPaths(snap, srv.Name)
	if c.Proto == app.ProtoUnix && len(out) > 0 {
		if r, err := filepath.EvalSymlinks(c.Path); err == nil && r != c.Path && slices.Contains(out, r) {
			out = append(out, c.Path)
		}
	}
	return out
}

// resolver is how a NAME the setting names is matched against an address
// where no name is known (a server sharing the host's network): the
// addresses the host resolves it to, asked once a minute at most. nil
// where the server has a network of its own (its names are known).
func (w *NetWatch) resolver() func(string) []netip.Addr {
	if w.Isolated {
		return nil
	}
	return func(name string) []netip.Addr {
		w.hostMu.Lock()
		if w.hostAddrs == nil {
			w.hostAddrs = map[string]hostLookup{}
		}
		h, ok := w.hostAddrs[name]
		w.hostMu.Unlock()
		if ok && time.Since(h.at) < time.Minute {
			return h.addrs
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		addrs, _ := net.DefaultResolver.LookupNetIP(ctx, "ip", name)
		for i, a := range addrs {
			addrs[i] = a.Unmap()
		}
		w.hostMu.Lock()
		if len(w.hostAddrs) > 256 {
			clear(w.hostAddrs)
		}
		w.hostAddrs[name] = hostLookup{addrs: addrs, at: time.Now()}
		w.hostMu.Unlock()
		return addrs
	}
}

func (w *NetWatch) audit(e audit.Entry) {
	if w.Audit == nil {
		return
	}
	if err := w.Audit.Append(e); err != nil {
		w.Log.Error("cannot write the audit log", "error", err)
	}
}

// Close writes what the record holds.
func (w *NetWatch) Close() {
	if w != nil && w.Record != nil {
		w.Record.Close()
	}
}

// refusedContact notes a destination refused to the run (a nil witness
// notes nothing): a server that stops after it is told it could not
// reach it.
func (r *RunWitness) refusedContact(dest string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refused = append(r.refused, app.RefusedAttempt{Path: dest, Op: app.OpConnect})
	if len(r.refused) > maxRefused {
		r.refused = r.refused[len(r.refused)-maxRefused:]
	}
}

// observe makes w decide obs's network, w's refusals noted by wit (a nil
// w or obs does nothing).
func (w *NetWatch) observe(obs *confine.Observer, wit *RunWitness) {
	if w == nil || obs == nil {
		return
	}
	w.Witness = wit
	obs.Network = w
}

// Observe is observe for the bridge: set it before obs starts.
func (w *NetWatch) Observe(obs *confine.Observer, wit *RunWitness) { w.observe(obs, wit) }

// EnvNameservers names the variable that sends the lookups of confined
// servers with a network of their own to other nameservers than the
// host's (/etc/resolv.conf): ADDR:PORT, comma-separated. The tests use
// it for a resolver on loopback; a person may point servers at a
// filtering resolver of their own.
const EnvNameservers = "ROOTKEEPER_NAMESERVERS"

// sandboxNameservers are EnvNameservers' addresses, nil (the host's) when
// unset; an entry that is no ADDR:PORT is left out.
func sandboxNameservers() []netip.AddrPort {
	var out []netip.AddrPort
	for _, f := range strings.Split(os.Getenv(EnvNameservers), ",") {
		if ap, err := netip.ParseAddrPort(strings.TrimSpace(f)); err == nil {
			out = append(out, ap)
		}
	}
	return out
}
