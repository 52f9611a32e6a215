package app

import (
	"cmp"
	"slices"
	"time"
)

// Setting names one of Rootkeeper's own settings of a server: what the
// person chose here, not what a host's config says.
type Setting uint8

// The settings PutServer carries over from the server it replaces, unless
// the new definition gives them.
const (
	SetRootsMode Setting = 1 << iota
	SetSampling
	SetHostRoots
	SetConfine
	SetKeepArgs
	SetNetwork
)

// allSettings are every Setting: a definition that gives them all (a
// server changed in place) carries nothing over.
const allSettings = SetRootsMode | SetSampling | SetHostRoots | SetConfine | SetKeepArgs | SetNetwork

// PutOptions says how PutServer stores a server.
type PutOptions struct {
	// Replace lets it replace a server of the same name; without it, the
	// name must be new.
	Replace bool
	// Given are the settings the new definition states (a flag typed, a
	// field in the window's form); the others are kept from the server it
	// replaces, so that an import, a paste or a protect never turns
	// confinement off or changes a roots mode it knows nothing of.
	Given Setting
	// KeepDecisions: the person saw the old and the new program and chose
	// to keep the decisions even though it runs something else now.
	KeepDecisions bool
	// Home resolves ~ in the configuration.
	Home string
	// StateDir is the state folder, where the server's data folder is: a
	// server that comes to run another program (ProgramID) has its data
	// folder kept aside there (KeptData). Empty: no data folder is looked
	// at (the program is recorded all the same).
	StateDir string
	// Now is when the requests are recorded; zero means now.
	Now time.Time
	// Repair: the definition is the replaced server's own, its folders put
	// back as the person wrote it (a server an earlier version stored with
	// them taken off, Server.FoldersTakenOff), not a new one. The folders it
	// had lost stay lost unless the definition names them again, and an
	// organisation's policy that blocks it does not refuse it: it was
	// stored before, and the policy keeps it from starting (BlockedServer).
	// Only a server so marked can be repaired.
	Repair bool
}

// PutResult says what PutServer did.
type PutResult struct {
	// Server is the server as stored.
	Server Server
	// Replaced: a server of that name existed.
	Replaced bool
	// NewProgram: the replaced server ran something else (SameProgram),
	// so it is a new program for consent; Before says what the old one ran
	// and Dropped how many of its decisions went.
	NewProgram bool
	Before     string
	Dropped    int
	// Asked are the slots recorded as requests: undecided, and not inside
	// a folder the server is allowed.
	Asked []Slot
	// KeptAside is the data folder kept aside because the server now runs
	// another program (nil: none was, or it held nothing).
	KeptAside *KeptData
}

// PutServer is the one way a server definition from any source (the
// command line, the window's form, a pasted or imported mcpServers file, a
// host's config being protected) is stored: its configuration is kept
// exactly as written, its slots are found (FindSlots; this reads the disk),
// the settings it does not give are carried over from the server it
// replaces, a server that now runs something else loses its decisions, and
// every undecided slot becomes a request (FromCommandLine). Open
// command-line requests for folders no longer in its configuration go. Its
// data folder stays with the program it belongs to (ProgramID): a server
// that now runs another program starts with an empty one, and the old one
// is kept aside (KeptData) — the last step, once nothing else can fail,
// and under the state file's lock, before any process can start the new
// program on it.
func (s *State) PutServer(srv Server, o PutOptions) (PutResult, error) {
	var res PutResult
	if o.Now.IsZero() {
		o.Now = time.Now().UTC()
	}
	old, exists := s.Server(srv.Name)
	if exists && !o.Replace {
		return res, inputErrorf("server %q already exists (use --replace to overwrite it)", srv.Name)
	}
	if o.Repair && !(exists && old.FoldersTakenOff) {
		return res, inputErrorf("server %q has no folders taken off to put back", srv.Name)
	}
	if exists {
		carrySettings(&srv, old, o.Given)
	}
	// A new server's network: off for one known to need none, open and
	// watched for any other (DefaultNetwork); a remote server has none.
	if !exists && o.Given&SetNetwork == 0 {
		srv.Network = policyNetworkDefault(DefaultNetwork(srv))
	}
	if srv.Type != TransportStdio {
		srv.Network = nil
	}
	// Whose data the data folder holds: the old server's program (a
	// server stored before this was recorded: what it ran), or nobody's
	// known for a new name (a folder a removed server of that name left).
	dataOwner := ""
	srv.KeptData = nil
	if exists {
		dataOwner = cmp.Or(old.DataProgram, ProgramID(old))
		srv.KeptData = slices.Clone(old.KeptData)
	}
	srv.DataProgram = ProgramID(srv)
	// Confined by default: a stdio server is confined unless the
	// definition says otherwise or the server it replaces was not.
	switch {
	case srv.Type != TransportStdio:
		srv.Confine, srv.ConfineRequired = false, false
	case o.Given&SetConfine == 0 && !(exists && old.Type == TransportStdio):
		srv.Confine = true
	}
	if !srv.Confine {
		srv.ConfineRequired = false
	}
	if !o.Repair {
		if err := policyRefusesServer(srv); err != nil {
			return res, err
		}
	}
	// A definition given anew is whole: nothing is lost from it. A
	// repaired one has lost what it does not name again.
	srv.Lost, srv.FoldersTakenOff = nil, false
	srv.Slots = FindSlots(srv, o.Home)
	if o.Repair {
		srv.Lost = stillLost(old.Lost, srv.Slots)
	}
	if exists {
		dropped, err := s.replaceServer(srv, o.KeepDecisions)
		if err != nil {
			return res, err
		}
		res.Replaced, res.Dropped = true, dropped
		if !SameProgram(old, srv) {
			res.NewProgram, res.Before = true, Program(old)
		}
	} else if err := s.AddServer(srv); err != nil {
		return res, err
	}
	res.Server = srv
	asked, err := s.requestSlots(srv, o.Now)
	res.Asked = asked
	if err != nil {
		return res, err
	}
	if dataOwner != srv.DataProgram && o.StateDir != "" {
		kept, err := keepAside(o.StateDir, srv.Name, dataOwner, o.Home, o.Now)
		if err != nil {
			return res, err
		}
		if kept != nil {
			i := slices.IndexFunc(s.Servers, func(x Server) bool { return x.Name == srv.Name })
			s.Servers[i].KeptData = append(s.Servers[i].KeptData, *kept)
			res.Server, res.KeptAside = s.Servers[i], kept
		}
	}
	return res, nil
}

// carrySettings gives srv the settings of old, the server it replaces,
// that given does not name.
func carrySettings(srv *Server, old Server, given Setting) {
	carry := func(set Setting, apply func()) {
		if given&set == 0 {
			apply()
		}
	}
	carry(SetRootsMode, func() { srv.RootsMode = old.RootsMode })
	carry(SetSampling, func() { srv.Sampling = old.Sampling })
	carry(SetHostRoots, func() { srv.HostRoots = old.HostRoots })
	if old.Type == TransportStdio {
		carry(SetConfine, func() { srv.Confine, srv.ConfineRequired = old.Confine, old.ConfineRequired })
	}
	carry(SetKeepArgs, func() { srv.KeepArgs = slices.Clone(old.KeepArgs) })
	carry(SetNetwork, func() { srv.Network = old.Network.Clone() })
}

// stillLost is the folders of lost that are no slot: those a repair could
// not put back (nil when there are none).
func stillLost(lost []string, slots []Slot) []string {
	still := slices.DeleteFunc(slices.Clone(lost), func(p string) bool {
		return slices.ContainsFunc(slots, func(sl Slot) bool { return sl.Path == p })
	})
	if len(still) == 0 {
		return nil
	}
	return still
}

// requestSlots records srv's undecided slots as requests and drops its open
// command-line requests for paths that are no slot of it any more.
func (s *State) requestSlots(srv Server, now time.Time) ([]Slot, error) {
	s.Requests = slices.DeleteFunc(s.Requests, func(r Request) bool {
		return r.Server == srv.Name && r.From == FromCommandLine &&
			!slices.ContainsFunc(srv.Slots, func(sl Slot) bool { return sl.Path == r.Path }) &&
			!slices.Contains(srv.Lost, r.Path)
	})
	var asked []Slot
	for _, sl := range srv.Slots {
		if _, err := s.AddRequest(srv.Name, sl.Path, FromCommandLine, now); err != nil {
			return asked, err
		}
		if _, open := s.Request(srv.Name, sl.Path); open {
			asked = append(asked, sl)
		}
	}
	return asked, nil
}
