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
	var old *Server // the server it replaces, nil for a new name
	if prev, exists := s.Server(srv.Name); exists {
		old = &prev
	}
	if old != nil && !o.Replace {
		return res, inputErrorf("server %q already exists (use --replace to overwrite it)", srv.Name)
	}
	if o.Repair && !(old != nil && old.FoldersTakenOff) {
		return res, inputErrorf("server %q has no folders taken off to put back", srv.Name)
	}
	settleSettings(&srv, old, o.Given)
	dataOwner := takeOverData(&srv, old)
	if !o.Repair {
		if err := policyRefusesServer(srv); err != nil {
			return res, err
		}
	}
	setSlots(&srv, old, o)
	res, err := s.storeServer(srv, old, o.KeepDecisions)
	if err != nil {
		return res, err
	}
	asked, err := s.requestSlots(srv, o.Now)
	res.Asked = asked
	if err != nil {
		return res, err
	}
	if dataOwner != srv.DataProgram && o.StateDir != "" {
		if err := s.keepDataAside(&res, dataOwner, o); err != nil {
			return res, err
		}
	}
	return res, nil
}

// settleSettings gives srv the settings it is stored with: those given,
// the others carried over from old, the server it replaces (nil: none), or
// defaulted for a new one. A stdio server is confined by default, and a
// new one's network is what its program is known to need; a remote server
// has neither confinement nor a network setting.
func settleSettings(srv *Server, old *Server, given Setting) {
	if old != nil {
		carrySettings(srv, *old, given)
	}
	// A new server's network: off for one known to need none, open and
	// watched for any other (DefaultNetwork); a remote server has none.
	if old == nil && given&SetNetwork == 0 {
		srv.Network = policyNetworkDefault(DefaultNetwork(*srv))
	}
	if srv.Type != TransportStdio {
		srv.Network = nil
	}
	// Confined by default: a stdio server is confined unless the
	// definition says otherwise or the server it replaces was not.
	switch {
	case srv.Type != TransportStdio:
		srv.Confine, srv.ConfineRequired = false, false
	case given&SetConfine == 0 && !(old != nil && old.Type == TransportStdio):
		srv.Confine = true
	}
	if !srv.Confine {
		srv.ConfineRequired = false
	}
}

// takeOverData records srv as the owner of its data folder from now on
// (DataProgram), with the folders old (the server it replaces, nil: none)
// had kept aside, and returns whose data the folder holds until then: the
// old server's program (a server stored before this was recorded: what it
// ran), or nobody's known for a new name (a folder a removed server of that
// name left).
func takeOverData(srv *Server, old *Server) (dataOwner string) {
	srv.KeptData = nil
	if old != nil {
		dataOwner = cmp.Or(old.DataProgram, ProgramID(*old))
		srv.KeptData = slices.Clone(old.KeptData)
	}
	srv.DataProgram = ProgramID(*srv)
	return dataOwner
}

// setSlots finds srv's slots in its configuration (this reads the disk). A
// definition given anew is whole: nothing is lost from it. A repaired one
// has lost what old had lost and it does not name again.
func setSlots(srv *Server, old *Server, o PutOptions) {
	srv.Lost, srv.FoldersTakenOff = nil, false
	srv.Slots = FindSlots(*srv, o.Home)
	if o.Repair {
		srv.Lost = stillLost(old.Lost, srv.Slots)
	}
}

// storeServer adds srv, or puts it in the place of old (nil: a new name),
// and says what that did: a server that now runs another program loses its
// decisions unless keepDecisions.
func (s *State) storeServer(srv Server, old *Server, keepDecisions bool) (PutResult, error) {
	var res PutResult
	if old != nil {
		dropped, err := s.replaceServer(srv, keepDecisions)
		if err != nil {
			return res, err
		}
		res.Replaced, res.Dropped = true, dropped
		if !SameProgram(*old, srv) {
			res.NewProgram, res.Before = true, Program(*old)
		}
	} else if err := s.AddServer(srv); err != nil {
		return res, err
	}
	res.Server = srv
	return res, nil
}

// keepDataAside keeps aside the data folder of res.Server, which holds
// dataOwner's data while the server now runs another program (keepAside),
// and records it in the server as stored and in res. A folder that holds
// nothing is not kept.
func (s *State) keepDataAside(res *PutResult, dataOwner string, o PutOptions) error {
	name := res.Server.Name
	kept, err := keepAside(o.StateDir, name, dataOwner, o.Home, o.Now)
	if err != nil {
		return err
	}
	if kept != nil {
		i := slices.IndexFunc(s.Servers, func(x Server) bool { return x.Name == name })
		s.Servers[i].KeptData = append(s.Servers[i].KeptData, *kept)
		res.Server, res.KeptAside = s.Servers[i], kept
	}
	return nil
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
