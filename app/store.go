package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	fastjson "github.com/segmentio/encoding/json"

	"rootkeeper/app/atomicfile"
	"rootkeeper/app/osfile"
)

// File names inside the state folder.
const (
	StateFileName = "state.json"
	lockFileName  = "state.lock"
	tempPrefix    = StateFileName + ".tmp-"
	// spareName is the file a save writes and then swaps with the state
	// file (atomicfile.Options.Spare): after a save it holds the state as
	// it was before.
	spareName = StateFileName + ".spare"
)

// DefaultStateDir is os.UserConfigDir()/rootkeeper.
func DefaultStateDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the config folder: %w", err)
	}
	return filepath.Join(dir, "rootkeeper"), nil
}

// CorruptError says a state file could not be parsed and was moved aside.
// It is a warning: the store goes on with an empty state (nothing exposed).
type CorruptError struct {
	MovedTo string // where the unreadable file now is
	Err     error  // why it could not be read
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("state file was unreadable (%v); moved it to %s and started with nothing exposed", e.Err, e.MovedTo)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// VersionError says the state file was written by a newer Rootkeeper. Such a
// file is refused, never overwritten.
type VersionError struct {
	Path    string
	Version int
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("%s has version %d but this Rootkeeper understands up to %d; refusing to touch it", e.Path, e.Version, StateVersion)
}

// Store keeps the State in one JSON file in a folder. Writes are atomic
// (the new bytes synced in a spare that then swaps names with the file, or
// a temp file renamed over it, and the folder synced: atomicfile) and
// serialised across processes by an flock on a lock file, so the command
// line and the running app never interleave or lose each other's updates.
type Store struct {
	dir string
	// OnCorrupt, when set, is told when an unreadable file was moved aside.
	OnCorrupt func(*CorruptError)
	// BeforeSave, when set, may change a state that an update produced
	// before it is published and saved: package app/secrets moves servers'
	// secrets into the OS keyring there, leaving references. It cannot fail
	// the save; it reports its own troubles.
	BeforeSave func(*State)

	// The last state read or written and the bytes it was parsed from:
	// when the file holds the same bytes again the parse is skipped (a
	// compare costs far less than decoding). Guarded by mu.
	mu         sync.Mutex
	cached     State
	cachedData []byte
	readBuf    []byte // the file is read into it, when what it held was cached already

	// enc encodes the states saved, remembering their servers (encMu: the
	// file's lock serialises the processes' saves, not the race
	// detector's view of this process's).
	encMu sync.Mutex
	enc   stateEncoder
}

// OpenStore opens (creating, mode 0700) the state folder dir.
func OpenStore(dir string) (*Store, error) {
	if dir == "" {
		return nil, &InputError{Msg: "state folder is empty"}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("state folder %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("creating state folder %q: %w", abs, err)
	}
	if err := checkStateDir(abs); err != nil {
		return nil, err
	}
	return &Store{dir: abs}, nil
}

// checkStateDir refuses a state folder that someone else could change: the
// decisions in it are the person's, and whoever can write there can grant
// any server any folder. It must be a real folder (not a symlink, which
// could be pointed elsewhere), owned by this user, and not writable by the
// group or others.
func checkStateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("state folder %q: %w", dir, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return inputErrorf("state folder %q is a symlink; refusing it (give the folder it points to)", dir)
	case !fi.IsDir():
		return inputErrorf("state folder %q is not a folder", dir)
	case osfile.WritableByOthers(fi):
		return inputErrorf("state folder %q is writable by others (mode %04o); refusing it (chmod go-w)", dir, fi.Mode().Perm())
	}
	if uid, ok := osfile.OwnerOf(fi); ok && uid != os.Geteuid() {
		return inputErrorf("state folder %q belongs to user %d, not to you (%d); refusing it", dir, uid, os.Geteuid())
	}
	return nil
}

// Dir is the state folder.
func (s *Store) Dir() string { return s.dir }

// Path is the state file.
func (s *Store) Path() string { return filepath.Join(s.dir, StateFileName) }

// Load reads the state. A missing file is an empty state; an unparseable one
// is moved aside (see CorruptError) and is an empty state too. It takes the
// exclusive lock, since moving a corrupt file aside is a write.
func (s *Store) Load() (State, error) { return s.load(nil) }

// load is Load handing the state to publish while the lock is still held,
// so that what is published follows the order of the file's versions (see
// Core.Reload), with the bytes it was read from (nil for no file). What is
// published is what load returns: a caller that publishes must not change
// it.
func (s *Store) load(publish func(State, []byte)) (State, error) {
	var st State
	err := osfile.WithLock(filepath.Join(s.dir, lockFileName), true, func() error {
		var data []byte
		var err error
		st, data, err = s.read()
		if err == nil && publish != nil {
			publish(st, data)
		}
		return err
	})
	return st, err
}

// Update applies fn to the current state under an exclusive lock and saves
// the result atomically. If fn returns an error nothing is written. It
// returns the state as saved.
func (s *Store) Update(fn func(*State) error) (State, error) {
	st, err := s.update(fn, nil)
	return st.Clone(), err // the caller's own: the store keeps st
}

// update is Update with a hook that publishes, always under the lock: the
// new state once fn has succeeded and before it is written, and the state as
// it stays on disk should the write fail, each with its file's bytes.
//
// What is published is shared, not copied: the state fn changed is never
// changed again (the store keeps it as its cache, and read hands out
// copies of that), and a snapshot's state is never changed either. A grant
// to fifty servers copied the whole state four times.
func (s *Store) update(fn func(*State) error, publish func(State, []byte)) (State, error) {
	var st State
	err := osfile.WithLock(filepath.Join(s.dir, lockFileName), true, func() error {
		var err error
		st, _, err = s.read()
		if err != nil {
			return err
		}
		if err := fn(&st); err != nil {
			return err
		}
		if s.BeforeSave != nil {
			s.BeforeSave(&st)
		}
		st.Version = StateVersion
		data, err := s.encode(&st)
		if err != nil {
			return err
		}
		if publish != nil {
			publish(st, data)
		}
		if err := s.write(st, data); err != nil {
			if publish != nil {
				// The file is as it was: what it holds is published again
				// (nothing, should it not even be read: nothing is shown
				// that was not saved).
				onDisk, onDiskData, rerr := s.read()
				if rerr != nil {
					onDisk, onDiskData = State{Version: StateVersion}, nil
				}
				publish(onDisk, onDiskData)
			}
			return err
		}
		return nil
	})
	return st, err
}

// encode encodes st for saving. Servers a change left as they were are
// the very list saved before (the cached state's, never changed): the
// snapshot that publishes st then holds the list the last one held, which
// the manager finds unchanged at once, and their encoding is reused.
func (s *Store) encode(st *State) ([]byte, error) {
	s.mu.Lock()
	before := s.cached.Servers
	s.mu.Unlock()
	if SameServers(st.Servers, before) {
		st.Servers = before
	}
	s.encMu.Lock()
	defer s.encMu.Unlock()
	return s.enc.encode(*st)
}

// read parses the state file, returned with its bytes (nil when there is
// no file, or it was moved aside); the caller holds the exclusive lock.
func (s *Store) read() (State, []byte, error) {
	s.mu.Lock()
	buf := s.readBuf
	s.readBuf = nil
	s.mu.Unlock()
	data, err := osfile.ReadFileInto(s.Path(), buf)
	if errors.Is(err, fs.ErrNotExist) {
		return State{Version: StateVersion}, nil, nil
	}
	if err != nil {
		return State{}, nil, fmt.Errorf("reading %s: %w", s.Path(), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cachedData != nil && bytes.Equal(data, s.cachedData) {
		// The bytes kept are handed out; these are read into again.
		s.readBuf = data
		return s.cached.Clone(), s.cachedData, nil
	}
	st, moved, err := s.parse(data)
	if err != nil {
		return st, nil, err
	}
	if moved {
		return st, nil, nil
	}
	s.cached, s.cachedData = st.Clone(), data
	return st, data, nil
}

// parse decodes the state file's bytes, moving the file aside (moved) if
// it cannot be understood.
func (s *Store) parse(data []byte) (_ State, moved bool, _ error) {
	st, perr := decodeState(data)
	var verr *VersionError
	if errors.As(perr, &verr) {
		verr.Path = s.Path()
		return State{}, false, verr
	}
	if perr != nil {
		movedTo := s.Path() + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000Z")
		if err := os.Rename(s.Path(), movedTo); err != nil {
			return State{}, false, fmt.Errorf("moving unreadable %s aside: %w", s.Path(), err)
		}
		atomicfile.SyncDir(s.dir)
		if s.OnCorrupt != nil {
			s.OnCorrupt(&CorruptError{MovedTo: movedTo, Err: perr})
		}
		return State{Version: StateVersion}, true, nil
	}
	return st, false, nil
}

// beforeRename is a test hook: it runs after the new bytes are written and
// synced (in the spare, or a temp file), just before they replace the state
// file.
var beforeRename = func() {}

func (s *Store) write(st State, data []byte) error {
	s.removeStaleTemps()
	err := atomicfile.Write(s.Path(), data, atomicfile.Options{Perm: 0o600, TempPrefix: tempPrefix, Spare: spareName,
		BeforeRename: func() error { beforeRename(); return nil }})
	if err != nil {
		return fmt.Errorf("saving state: %w", err)
	}
	s.mu.Lock()
	s.cached, s.cachedData = st, data // never changed: read hands out copies
	s.mu.Unlock()
	return nil
}

// removeStaleTemps deletes temp files left by a process that died before
// renaming; the caller holds the exclusive lock, so none is in use.
func (s *Store) removeStaleTemps() {
	names, _ := osfile.Names(s.dir)
	for _, name := range names {
		if strings.HasPrefix(name, tempPrefix) {
			os.Remove(filepath.Join(s.dir, name))
		}
	}
}

// decodeState parses and migrates a state file.
func decodeState(data []byte) (State, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return State{}, errors.New("file is empty")
	}
	var head struct {
		Version *int `json:"version"`
	}
	// segmentio's decoder, not the standard library's: the same results
	// (tested), five to ten times sooner. A state of 1,000 folders and
	// 20,000 decisions (4.9 MB) took 95 ms to parse, and the window, the
	// app and every bridge and command parse it when they start or it
	// changes.
	if err := fastjson.Unmarshal(data, &head); err != nil {
		return State{}, err
	}
	if head.Version == nil {
		return State{}, errors.New(`no "version" field`)
	}
	if *head.Version > StateVersion {
		return State{}, &VersionError{Version: *head.Version}
	}
	if *head.Version < 0 {
		return State{}, fmt.Errorf("invalid version %d", *head.Version)
	}
	data, err := migrate(data, *head.Version)
	if err != nil {
		return State{}, err
	}
	// What follows the state's object is ignored, as a stream decoder
	// would (Unmarshal above has refused anything there but space).
	var st State
	if _, err := fastjson.Parse(data, &st, 0); err != nil {
		return State{}, err
	}
	if err := st.check(); err != nil {
		return State{}, err
	}
	return st, nil
}

// check rejects a parsed state that breaks the invariants everything else
// relies on (canonical absolute root paths, unique names).
func (s *State) check() error {
	paths := map[string]bool{}
	for _, r := range s.Roots {
		if err := ValidAbsPath(r.Path); err != nil {
			return err
		}
		if paths[r.Path] {
			return fmt.Errorf("root %q listed twice", r.Path)
		}
		paths[r.Path] = true
	}
	names := map[string]bool{}
	for _, srv := range s.Servers {
		if names[srv.Name] {
			return fmt.Errorf("server %q listed twice", srv.Name)
		}
		names[srv.Name] = true
	}
	return nil
}

// migration turns the JSON of version From into that of version From+1.
type migration struct {
	From  int
	Apply func(map[string]any) error
}

// migrations is the table of state-file upgrades, applied in order.
var migrations = []migration{
	// Version 0 was the unversioned prototype format, which called the
	// decisions "grants" and had no verdict or scope: every grant was an
	// allow, always.
	{From: 0, Apply: func(doc map[string]any) error {
		if grants, ok := doc["grants"]; ok {
			list, _ := grants.([]any)
			for _, g := range list {
				if m, ok := g.(map[string]any); ok {
					m["verdict"] = string(Allow)
					m["scope"] = string(Always)
				}
			}
			doc["decisions"] = list
			delete(doc, "grants")
		}
		return nil
	}},
	// Version 1 took the folders off a server's command line and
	// environment and made them requests: the configuration lost them.
	// Version 2 keeps configurations whole (slots). A stdio server is
	// marked so that RepairTakenOff can put its folders back where a
	// host's backup tells their place; the folders still asked about are
	// lost until then (the server is held: nothing it was configured with
	// is silently given or taken away).
	{From: 1, Apply: func(doc map[string]any) error {
		asked := map[string][]any{}
		reqs, _ := doc["requests"].([]any)
		for _, r := range reqs {
			if m, ok := r.(map[string]any); ok && m["from"] == FromCommandLine {
				name, _ := m["server"].(string)
				asked[name] = append(asked[name], m["path"])
			}
		}
		servers, _ := doc["servers"].([]any)
		for _, sv := range servers {
			m, ok := sv.(map[string]any)
			if !ok || m["type"] != TransportStdio {
				continue
			}
			m["foldersTakenOff"] = true
			name, _ := m["name"].(string)
			if lost := asked[name]; len(lost) > 0 {
				m["lost"] = lost
			}
		}
		return nil
	}},
	// Version 2 confined a stdio server only when asked to; version 3
	// confines every server put unless the person says otherwise. A
	// server stored before keeps its setting: one that was confined was
	// asked for in so many words (ConfineRequired), one that was not is
	// offered once to be confined (ConfineOffer).
	{From: 2, Apply: func(doc map[string]any) error {
		var offer []any
		servers, _ := doc["servers"].([]any)
		for _, sv := range servers {
			m, ok := sv.(map[string]any)
			if !ok || m["type"] != TransportStdio {
				continue
			}
			if m["confine"] == true {
				m["confineRequired"] = true
			} else if name, ok := m["name"].(string); ok {
				offer = append(offer, name)
			}
		}
		if len(offer) > 0 {
			doc["confineOffer"] = offer
		}
		return nil
	}},
	{From: 3, Apply: migrate4},
}

// migrate4 brings a version 3 state to version 4, which adds what an
// older build would drop unseen when it saves: the folders a server needs
// to run (needs), the folders denied to it that are no roots (refusals),
// the program its data folder belongs to and the data kept aside
// (dataProgram, keptData), and its network setting (network). A version 3
// state has none of them, and a server without a network setting keeps
// its open network, as before; so nothing changes but the version, which
// makes a build that knows none of them refuse the file rather than lose
// a person's decisions.
func migrate4(map[string]any) error { return nil }

func migrate(data []byte, version int) ([]byte, error) {
	if version == StateVersion {
		return data, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	for _, m := range migrations {
		if m.From < version {
			continue
		}
		if err := m.Apply(doc); err != nil {
			return nil, fmt.Errorf("migrating from version %d: %w", m.From, err)
		}
		version = m.From + 1
	}
	doc["version"] = version
	return json.Marshal(doc)
}
