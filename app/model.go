package app

import (
	"rootkeeper/app/policy"
	"slices"
	"time"
)

// StateVersion is the version of the state file this build writes. Files with
// a lower version are migrated (see migrations); files with a higher version
// are refused rather than overwritten.
const StateVersion = 4

// Version is the program's version: FyneApp.toml's, which main reads at
// start; "dev" in a test binary. --version prints it and the MCP client
// announces it to servers (clientInfo), so there is one version to read.
var Version = "dev"

// Source says where a root or a decision came from.
type Source string

// Where roots come from.
const (
	SourceGit      Source = "git"      // found as a git repository
	SourceMarker   Source = "marker"   // found by a project marker file
	SourcePicked   Source = "picked"   // picked by hand (folder picker or `roots add`)
	SourceImported Source = "imported" // imported from another host's config
	// SourceRequested roots were asked for (by a host or a command line)
	// and then granted.
	SourceRequested Source = "requested"
)

// Who made a decision.
const (
	ByDialog      Source = "dialog"       // a consent dialog in the GUI
	ByWindow      Source = "window"       // a switch or review in the main window
	ByTray        Source = "tray"         // a tray menu click
	ByCommandLine Source = "command-line" // a command typed by the person
	ByImport      Source = "import"       // imported with a server config
)

// Root is a folder that may be exposed to MCP servers.
type Root struct {
	// Path is the canonical absolute path: cleaned, symlinks resolved. It is
	// the root's identity.
	Path string `json:"path"`
	// Given is the path as the person gave it (a symlink, say), kept for
	// display. Empty when it equals Path.
	Given string `json:"given,omitempty"`
	// Name is the display name, by default the folder's base name.
	Name string `json:"name"`
	// Source says how the root was found.
	Source Source `json:"source"`
	// Enabled roots may be shared; disabled ones are shown to nobody.
	Enabled bool `json:"enabled"`
	// Device is the filesystem device the folder was on when added; a
	// different device later means the drive was unmounted.
	Device uint64 `json:"device,omitempty"`
	// Branch and Remote describe a git repository (empty otherwise).
	Branch string `json:"branch,omitempty"`
	Remote string `json:"remote,omitempty"`
	// Added is when the root was added.
	Added time.Time `json:"added"`
}

// URI is the root's file:// URI, percent-encoded.
func (r Root) URI() string { return URIFromPath(r.Path) }

// RootsMode says how a server learns its roots.
type RootsMode string

// The roots modes.
const (
	// RootsProtocol declares the roots capability and answers roots/list.
	RootsProtocol RootsMode = "protocol"
	// RootsArgs appends the visible paths to the server's command line and
	// restarts it when they change, for servers that never ask.
	RootsArgs RootsMode = "args"
	// RootsEnv passes the visible paths in the ROOTKEEPER_ROOTS environment
	// variable, as a JSON array of strings (EncodeRootsEnv), and restarts on
	// change.
	RootsEnv RootsMode = "env"
	// RootsOff does not declare the capability; roots/list gets -32601.
	RootsOff RootsMode = "off"
)

// Transport types of a server.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// Server is one configured MCP server, in the shape of the mcpServers entries
// of common MCP host configs, plus RootsMode.
type Server struct {
	Name string `json:"name"`
	// Type is "stdio", "http" or "sse".
	Type string `json:"type"`
	// Stdio servers.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	// Confine runs a stdio server under Landlock (Linux): it can reach its
	// visible roots, what it needs to run and its own data folder, nothing
	// else (mcp/confine). Every stdio server put is confined unless the
	// person turns it off (PutServer); a server an earlier version stored
	// keeps its setting (see State.ConfineOffer). Where Landlock is missing
	// a server confined by default runs unconfined, and says so.
	Confine bool `json:"confine,omitempty"`
	// ConfineRequired: the person asked for confinement in so many words
	// (`servers add --confine`, or an earlier version, where it was opt-in),
	// so where Landlock is missing the server is not started rather than
	// started without the boundary asked for.
	ConfineRequired bool `json:"confineRequired,omitempty"`
	// Remote servers.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// RootsMode defaults to RootsProtocol when empty.
	RootsMode RootsMode `json:"rootsMode,omitempty"`
	// Sampling defaults to SamplingReview when empty.
	Sampling SamplingMode `json:"sampling,omitempty"`
	// HostRoots says what a bridged session makes of its host's folders;
	// HostRootsRequest when empty.
	HostRoots HostRootsMode `json:"hostRoots,omitempty"`
	// Network is where a confined stdio server's sockets may reach past
	// its sandbox (network.go); nil (a server stored before there was a
	// setting) is open, watched. A new server gets DefaultNetwork.
	Network *NetworkSetting `json:"network,omitempty"`
	// KeepArgs are arguments (or environment values) that look like
	// folders or files but are not slots: the escape hatch of FindSlots for
	// values that only look like paths (a name that happens to be a folder
	// here). Shown as a warning.
	KeepArgs []string `json:"keepArgs,omitempty"`
	// Slots are the folders and files its command line and environment
	// name (FindSlots), found when it was put (PutServer). Each is decided
	// like a root; the server starts only when all are allowed (HoldOf).
	Slots []Slot `json:"slots,omitempty"`
	// Lost are folders an earlier version of Rootkeeper took off its
	// configuration whose place is unknown: the server is held until it is
	// defined again.
	Lost []string `json:"lost,omitempty"`
	// FoldersTakenOff marks a server stored by a version that took folders
	// off configurations (state version 1), until RepairTakenOff has put
	// them back from a host's backup or found that it cannot.
	FoldersTakenOff bool `json:"foldersTakenOff,omitempty"`
	// DataProgram is the program (ProgramID) its data folder belongs to:
	// what ran under this name when the folder was last given to a
	// program. It is kept here, in the state, rather than in the folder,
	// which the server may write. Empty in a state written before it was
	// recorded: the folder belongs to what the server runs.
	DataProgram string `json:"dataProgram,omitempty"`
	// KeptData are data folders of programs that ran under this name
	// before, kept aside when its command came to run another program,
	// until the person gives one to the server (UseKeptData) or removes it
	// (RemoveKeptData).
	KeptData []KeptData `json:"keptData,omitempty"`
}

// Mode returns the server's roots mode, RootsProtocol when unset.
func (s Server) Mode() RootsMode {
	if s.RootsMode == "" {
		return RootsProtocol
	}
	return s.RootsMode
}

// Verdict is allow or deny.
type Verdict string

// The verdicts.
const (
	Allow Verdict = "allow"
	Deny  Verdict = "deny"
)

// Scope says how long a decision lasts.
type Scope string

// The scopes.
const (
	// Always lasts until revoked.
	Always Scope = "always"
	// UntilQuit lasts until the long-running app (GUI or headless) quits; such
	// decisions are dropped when the app next starts.
	UntilQuit Scope = "until-quit"
)

// Decision is a person's answer to "may Server see Root?".
type Decision struct {
	Server  string    `json:"server"`
	Root    string    `json:"root"` // the root's canonical Path
	Verdict Verdict   `json:"verdict"`
	Scope   Scope     `json:"scope"`
	At      time.Time `json:"at"`
	By      Source    `json:"by"`
}

// State is everything Rootkeeper remembers, as stored in state.json.
type State struct {
	Version   int        `json:"version"`
	Roots     []Root     `json:"roots"`
	Servers   []Server   `json:"servers"`
	Decisions []Decision `json:"decisions"`
	// Paused stops all sharing without forgetting anything.
	Paused bool `json:"paused"`
	// SearchFolders are where discovery looks; empty means the defaults.
	SearchFolders []string `json:"searchFolders,omitempty"`
	// Sampling is the model that answers servers' sampling requests; nil
	// means sampling is not configured.
	Sampling *SamplingConfig `json:"sampling,omitempty"`
	// PrivateEnv names environment variables of the app that no server
	// gets (see ServerEnv).
	PrivateEnv []string `json:"privateEnv,omitempty"`
	// Requests are folders asked for and not yet decided (see Request).
	Requests []Request `json:"requests,omitempty"`
	// Once are the recent "allow once" answers to confined servers'
	// attempts (see Once).
	Once []Once `json:"once,omitempty"`
	// ConfineOffer names the stdio servers an earlier version left
	// unconfined (confinement was opt-in then): the window offers once to
	// confine them (ConfineOffered, AnswerConfineOffer).
	ConfineOffer []string `json:"confineOffer,omitempty"`
	// ConfineFailures are the confined servers that stopped after
	// reaching past their folders, with the way out (ConfineFailure).
	ConfineFailures []ConfineFailure `json:"confineFailures,omitempty"`
	// Needs are folders confined servers need to run, each allowed to
	// one server alone (see Need).
	Needs []Need `json:"needs,omitempty"`
	// Refusals are folders confined servers reached for that the person
	// refused them, each one server's alone (see Refusal).
	Refusals []Refusal `json:"refusals,omitempty"`
	// Settings are the person's settings of how Rootkeeper behaves; nil
	// means the defaults.
	Settings *Settings `json:"settings,omitempty"`
}

// Settings are how Rootkeeper behaves where a person may choose.
type Settings struct {
	// ReachWait is how many seconds a confined server's call past its
	// folders waits while a person is asked (State.ReachWait); 0 means
	// DefaultReachWait.
	ReachWait int `json:"reachWait,omitempty"`
}

// HealthStatus is the result of an access check on a root.
type HealthStatus string

// The health statuses. The zero value means "not checked yet", which is not
// ok: an unchecked root is never visible.
const (
	HealthUnknown    HealthStatus = ""
	HealthOK         HealthStatus = "ok"
	HealthMissing    HealthStatus = "missing"
	HealthNotDir     HealthStatus = "not-a-directory"
	HealthUnreadable HealthStatus = "unreadable"
	HealthUnmounted  HealthStatus = "unmounted"
	HealthMoved      HealthStatus = "moved"
)

// Health is what the last access check of a root found.
type Health struct {
	Status HealthStatus `json:"status"`
	// Err is the operating system's error, for display.
	Err string `json:"error,omitempty"`
	// MovedTo is where a renamed root went, when that is known.
	MovedTo string `json:"movedTo,omitempty"`
	// Branch is the current git branch, kept fresh by the watcher.
	Branch string `json:"branch,omitempty"`
	// Checked is when the check ran.
	Checked time.Time `json:"checked"`
}

// OK reports whether the root passed its access check.
func (h Health) OK() bool { return h.Status == HealthOK }

// Snapshot is an immutable view of everything visible depends on. Nobody
// mutates a Snapshot after publishing it; changes make a new one.
type Snapshot struct {
	State State
	// Health maps a root's Path to its last access check. A root with no
	// entry has not been checked and is not visible.
	Health map[string]Health
	// Servers holds each server's live connection status, by name. Empty
	// outside a running app.
	Servers map[string]ServerStatus
	// Notices are things the person should know, by topic: a state file moved
	// aside, folders watched by polling.
	Notices map[string]string
	// Bridges are the running bridge sessions (hosts' servers in the path),
	// by session id. Empty outside a running app.
	Bridges map[int]BridgeSession
	// Policy is the organisation's policy this snapshot was decided under
	// (orgpolicy.go): the one rule reads it, as it reads State.
	Policy policy.Policy
	// Network is each confined server's record of the destinations it
	// reached, by server (netrecord.go): read from the state folder, where
	// whoever observes the server writes it.
	Network map[string]NetworkRecord
	// Seq increases with every published snapshot.
	Seq uint64
	// StateGen, HealthGen, ServersGen, NoticesGen and BridgesGen increase
	// with every change of State, Health, Servers, Notices and Bridges: a
	// reader tells what changed between two snapshots by comparing them.
	StateGen, HealthGen, ServersGen, NoticesGen, BridgesGen uint64
	// PolicyGen increases with every change of Policy.
	PolicyGen uint64
	// NetworkGen increases with every change of Network.
	NetworkGen uint64

	// vis is the visibility index of State and Health, built on first use
	// (index.go).
	vis *visCell
	// stateData is the state file's bytes State was read from or saved
	// as, nil when not known (Core.setState).
	stateData []byte
}

// SameRule reports whether a and b give every server the same roots by
// the one rule: neither the state nor the health changed between them.
func SameRule(a, b *Snapshot) bool {
	return a != nil && b != nil && a.StateGen == b.StateGen && a.HealthGen == b.HealthGen && a.PolicyGen == b.PolicyGen
}

// ServerState is where a server's connection stands.
type ServerState string

// The server states.
const (
	ServerStarting  ServerState = "starting"
	ServerConnected ServerState = "connected"
	ServerFailed    ServerState = "failed"
	ServerStopped   ServerState = "stopped"
	// ServerHeld: not started, because a slot of its configuration is not
	// allowed (HoldOf); Error says which and the way out.
	ServerHeld ServerState = "held"
)

// ServerStatus is the live status of one server's connection, reported by
// the MCP client and shown by the GUI and `status`.
type ServerStatus struct {
	State           ServerState `json:"state"`
	ProtocolVersion string      `json:"protocolVersion,omitempty"`
	ServerName      string      `json:"serverName,omitempty"`
	ServerVersion   string      `json:"serverVersion,omitempty"`
	Error           string      `json:"error,omitempty"`
	Since           time.Time   `json:"since"`
	// LastSent are the root URIs of the last roots/list answer (or command
	// line, for args/env mode), and when it was sent.
	LastSent   []string  `json:"lastSent"`
	LastSentAt time.Time `json:"lastSentAt,omitzero"`
	Restarts   int       `json:"restarts,omitempty"`
	PID        int       `json:"pid,omitempty"`
	// LandlockABI is the Landlock ABI a confined server was started under;
	// 0 when it is not confined.
	LandlockABI int `json:"landlockABI,omitempty"`
	// LogProblem says why its stderr log (logs/NAME.log) cannot be
	// written or rotated now; it is tried again while the server writes.
	LogProblem string `json:"logProblem,omitempty"`
}

// Equal reports whether two statuses say the same thing.
func (s ServerStatus) Equal(o ServerStatus) bool {
	return s.State == o.State && s.ProtocolVersion == o.ProtocolVersion &&
		s.ServerName == o.ServerName && s.ServerVersion == o.ServerVersion &&
		s.Error == o.Error && s.Since.Equal(o.Since) && s.LastSentAt.Equal(o.LastSentAt) &&
		s.Restarts == o.Restarts && s.PID == o.PID && slices.Equal(s.LastSent, o.LastSent) &&
		s.LandlockABI == o.LandlockABI && s.LogProblem == o.LogProblem
}
