package app

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"rootkeeper/app/policy"
	"rootkeeper/app/words"
	"slices"
	"strings"
)

// A Slot is a folder or file named in a server's configuration: an
// argument (`server ~/Desktop`, `--repository DIR`, `--db=FILE`), an
// environment value (`GIT_BASE_DIR=DIR`) or one element of a path list
// (`PATHS=/x:/y`). The configuration keeps its bytes; the slot's Path is
// what the person decides, like a root. A server starts only when every
// slot is allowed (see HoldOf), and then runs exactly as configured: taking
// a folder off a command line could remove the server's own limit or
// corrupt a flag, so through Rootkeeper a server never reaches more than it
// was configured to.
type Slot struct {
	// Path is what the value resolves to: absolute, canonical (~ expanded,
	// relative to the server's working folder, symlinks resolved).
	Path string `json:"path"`
	// Given is the value as it was written (the list element, for a list).
	Given string `json:"given"`
	// Arg is the index of the argument holding it in Server.Args; -1 when
	// it is in the environment.
	Arg int `json:"arg"`
	// Env names the environment variable holding it; empty for an argument.
	Env string `json:"env,omitempty"`
	// Flag is the flag it is the value of: "--repository" when the value is
	// the next argument, "--db=" when it is in the same one.
	Flag string `json:"flag,omitempty"`
	// Elem is its 1-based place in a path list (A=/x:/y); 0 for a whole
	// value.
	Elem int `json:"elem,omitempty"`
	// File: the path is a file, not a folder.
	File bool `json:"file,omitempty"`
	// Socket: the file is a unix socket (slots_socket.go), which an allowed
	// slot lets the server connect to.
	Socket bool `json:"socket,omitempty"`
}

// Where says, for a person, where in the configuration the slot is:
// "argument 2", "--repository", "$GIT_BASE_DIR", "element 2 of $PATHS".
func (s Slot) Where() string {
	var w string
	switch {
	case s.Env != "":
		w = "$" + s.Env
	case s.Flag != "":
		w = strings.TrimSuffix(s.Flag, "=")
	default:
		w = fmt.Sprintf("argument %d", s.Arg+1)
	}
	if s.Elem > 0 {
		w = fmt.Sprintf("element %d of %s", s.Elem, w)
	}
	return w
}

// FindSlots finds the slots of a stdio server's configuration: every
// argument and environment value that names an existing folder or file
// (absolute, ~/…, or relative to the server's working folder when it says
// so, ./x or x/y), unless it is one of srv.KeepArgs. Files that are
// programs (executable, or scripts by their extension) are the server's
// code, not its data, and are no slots. home resolves ~. It reads the disk.
func FindSlots(srv Server, home string) []Slot {
	if srv.Type != TransportStdio {
		return nil
	}
	var out []Slot
	add := func(value string, at Slot) {
		if value == "" || slices.Contains(srv.KeepArgs, value) {
			return
		}
		if p, file, ok := slotPath(value, srv.Cwd, home); ok {
			at.Path, at.Given, at.File = p, value, file
			out = append(out, at)
			return
		}
		if socks := socketSlots(value, at.Env, srv.Cwd, home); len(socks) > 0 {
			for _, sk := range socks {
				s := at
				s.Path, s.Given, s.File, s.Socket = sk.Path, sk.Given, true, true
				out = append(out, s)
			}
			return
		}
		// A list of paths (PATH-like), never a URL split at its colons
		// (redis://:password@host:port would give "//", the root).
		if !strings.ContainsRune(value, filepath.ListSeparator) || strings.Contains(value, "://") {
			return
		}
		for i, elem := range filepath.SplitList(value) {
			if elem == "" || slices.Contains(srv.KeepArgs, elem) {
				continue
			}
			if p, file, ok := slotPath(elem, srv.Cwd, home); ok {
				s := at
				s.Path, s.Given, s.File, s.Elem = p, elem, file, i+1
				out = append(out, s)
			}
		}
	}
	for i, a := range srv.Args {
		if slices.Contains(srv.KeepArgs, a) {
			continue
		}
		if strings.HasPrefix(a, "-") {
			// --flag=VALUE; a bare flag is no path.
			if k, v, ok := strings.Cut(a, "="); ok {
				add(v, Slot{Arg: i, Flag: k + "="})
			}
			continue
		}
		at := Slot{Arg: i}
		if i > 0 && strings.HasPrefix(srv.Args[i-1], "-") && !strings.Contains(srv.Args[i-1], "=") {
			at.Flag = srv.Args[i-1]
		}
		add(a, at)
	}
	for _, k := range slices.Sorted(maps.Keys(srv.Env)) {
		add(srv.Env[k], Slot{Arg: -1, Env: k})
	}
	return out
}

// NamesSlot reports whether value, as an environment value of srv (its
// working folder and kept values apply), names a folder or file: whether
// it would be a slot. home resolves ~.
func NamesSlot(srv Server, value, home string) bool {
	probe := Server{Type: TransportStdio, Env: map[string]string{"V": value}, Cwd: srv.Cwd, KeepArgs: srv.KeepArgs}
	return len(FindSlots(probe, home)) > 0
}

// programExts are the extensions of files a server runs rather than reads.
var programExts = []string{".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".py", ".pyz", ".rb", ".jar",
	".php", ".pl", ".sh", ".exe", ".bat", ".cmd", ".ps1", ".lua", ".wasm"}

// slotPath reports whether v names an existing folder or data file, which,
// and whether it is a file.
func slotPath(v, cwd, home string) (path string, file, ok bool) {
	if v == "" || strings.ContainsAny(v, "\x00\n") {
		return "", false, false
	}
	p := v
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return "", false, false
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	case filepath.IsAbs(p):
	case cwd != "" && (strings.HasPrefix(p, ".") || strings.ContainsRune(p, filepath.Separator)):
		// Relative to the server's working folder, when it says so (./x,
		// x/y): a bare word such as "stdio" is an argument, whatever
		// folder happens to carry that name.
		p = filepath.Join(cwd, p)
	default:
		return "", false, false
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", false, false
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() || fi.Mode()&0o111 != 0 || slices.Contains(programExts, strings.ToLower(filepath.Ext(p))) {
			return "", false, false
		}
		file = true
	}
	canon, _, err := CanonicalPath(p, "/")
	if err != nil {
		return "", false, false
	}
	return canon, file, true
}

// SlotState is where one slot of a server stands.
type SlotState string

// The slot states.
const (
	// SlotAllowed: allowed (itself, or inside a folder allowed to the
	// server), and switched on.
	SlotAllowed SlotState = "allowed"
	// SlotUndecided: nobody has decided it yet.
	SlotUndecided SlotState = "undecided"
	// SlotDenied: refused to this server.
	SlotDenied SlotState = "denied"
	// SlotOff: allowed, but its folder is switched off for everyone.
	SlotOff SlotState = "off"
)

// SlotStateOf says where slot of server stands in snap. A decision about
// the slot's path itself counts first; without one, an allowed folder that
// holds it (an allowed ~/src holds ~/src/x) allows it.
func SlotStateOf(snap *Snapshot, server string, slot Slot) SlotState {
	return slotState(snap, server, slot, snap.visibility())
}

func slotState(snap *Snapshot, server string, slot Slot, x *visIndex) SlotState {
	on := func(path string) bool {
		r, ok := snap.State.Root(path)
		return !ok || r.Enabled
	}
	if _, decided := x.access[[2]string{server, slot.Path}]; decided {
		if !x.allows(server, slot.Path) {
			return SlotDenied
		}
		if !on(slot.Path) {
			return SlotOff
		}
		return SlotAllowed
	}
	allowed, _ := x.allowedIn(snap.State.Decisions, server)
	for _, p := range allowed {
		if IsWithin(slot.Path, p) && on(p) {
			return SlotAllowed
		}
	}
	return SlotUndecided
}

// AllowedSlotPaths are the paths of server's allowed slots, sorted: with
// its visible roots, what a confined server may reach.
func AllowedSlotPaths(snap *Snapshot, server string) []string {
	srv, ok := snap.State.Server(server)
	if !ok {
		return nil
	}
	x := snap.visibility()
	var out []string
	for _, s := range srv.Slots {
		if slotState(snap, server, s, x) == SlotAllowed {
			out = append(out, s.Path)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// A Hold is why a server may not start: a slot of its configuration that
// is not allowed, a folder an earlier version took off its configuration,
// or sharing paused while it has slots. A held server is never started
// without the folder: it waits.
type Hold struct {
	Server string
	// Blocked says why the organisation's policy blocks the server (a
	// denied server, one that must run confined and does not): it is not
	// started whatever the person decides.
	Blocked string
	// Paused: sharing is paused, and the server names folders or needs
	// folders to run.
	Paused bool
	// Needs are, while sharing is paused, the folders a confined server
	// with no slots needs to run (NeedPaths): paused, it gets none of the
	// person's folders, and it is held rather than started without them.
	Needs []string
	// Undecided, Denied and Off are the paths of its slots in those
	// states, sorted.
	Undecided, Denied, Off []string
	// Lost are folders an earlier version took off its configuration
	// whose place in it is unknown (Server.Lost).
	Lost []string
}

// HoldOf says why server may not start in snap, or nil when it may: every
// slot allowed and switched on, nothing lost, and sharing not paused (for a
// server with slots, or a confined one that needs folders to run).
func HoldOf(snap *Snapshot, server string) *Hold {
	if snap == nil {
		return nil
	}
	srv, ok := snap.State.Server(server)
	if ok {
		if why := snap.Policy.Denied(policy.Server{Name: srv.Name, Command: srv.Command, Args: srv.Args, URL: srv.URL}); why != "" {
			return &Hold{Server: server, Blocked: why}
		}
		if snap.Policy.RequireConfinement && srv.Type == TransportStdio && !srv.Confine {
			return &Hold{Server: server, Blocked: "it must run confined, and it is set to run unconfined"}
		}
	}
	var needs []string
	if srv.Confine {
		needs = NeedPaths(snap, server)
	}
	if !ok || (len(srv.Slots) == 0 && len(srv.Lost) == 0 && len(needs) == 0) {
		return nil
	}
	h := &Hold{Server: server, Lost: slices.Clone(srv.Lost), Paused: snap.State.Paused}
	if h.Paused && len(srv.Slots) == 0 {
		h.Needs = needs
	}
	x := snap.visibility()
	for _, s := range srv.Slots {
		switch slotState(snap, server, s, x) {
		case SlotUndecided:
			h.Undecided = append(h.Undecided, s.Path)
		case SlotDenied:
			h.Denied = append(h.Denied, s.Path)
		case SlotOff:
			h.Off = append(h.Off, s.Path)
		}
	}
	for _, l := range []*[]string{&h.Undecided, &h.Denied, &h.Off} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	if !h.Paused && len(h.Lost)+len(h.Undecided)+len(h.Denied)+len(h.Off) == 0 {
		return nil
	}
	return h
}

// Waiting reports whether the hold ends with the person's answer to a
// question already asked (only undecided slots hold it), rather than with
// an act of theirs elsewhere (a denied slot allowed, a server defined
// again, sharing resumed).
func (h *Hold) Waiting() bool {
	return h.Blocked == "" && !h.Paused && len(h.Lost)+len(h.Denied)+len(h.Off) == 0 && len(h.Undecided) > 0
}

// Text says in one line why the server is held and the way out, with
// paths under home written ~/…: "waiting for your decision on ~/work
// (rootkeeper grant git ~/work)".
func (h *Hold) Text(home string) string {
	show := func(paths []string) string {
		out := make([]string, len(paths))
		for i, p := range paths {
			out[i] = words.HomeShort(p, home)
		}
		return strings.Join(out, ", ")
	}
	name := words.ShellQuote(h.Server)
	// In a command, a path under home is written ~/… too, quoted after the
	// ~/ so that the shell still expands it.
	arg := func(p string) string {
		if short := words.HomeShort(p, home); strings.HasPrefix(short, "~/") {
			return "~/" + words.ShellQuote(short[2:])
		}
		return words.ShellQuote(p)
	}
	if h.Blocked != "" {
		return words.SafeText(fmt.Sprintf("your organisation blocks %s: %s (%s)", h.Server, h.Blocked, ByPolicy))
	}
	var parts []string
	if len(h.Lost) > 0 {
		parts = append(parts, fmt.Sprintf("its configuration lost %s (an earlier Rootkeeper took it off the command line); define the server again with the folder: rootkeeper servers add %s --replace -- COMMAND ARGS…",
			show(h.Lost), name))
	}
	if len(h.Denied) > 0 {
		parts = append(parts, fmt.Sprintf("its configuration needs %s, which you denied: allow it (rootkeeper grant %s %s) or edit the server",
			show(h.Denied), name, arg(h.Denied[0])))
	}
	if len(h.Off) > 0 {
		parts = append(parts, fmt.Sprintf("its configuration needs %s, which is switched off (rootkeeper roots enable %s)",
			show(h.Off), arg(h.Off[0])))
	}
	if len(h.Undecided) > 0 {
		parts = append(parts, fmt.Sprintf("waiting for your decision on %s (rootkeeper grant %s %s)",
			show(h.Undecided), name, arg(h.Undecided[0])))
	}
	switch {
	case h.Paused && len(h.Needs) > 0:
		parts = append(parts, fmt.Sprintf("sharing is paused and it needs %s to run (rootkeeper resume)", show(h.Needs)))
	case h.Paused:
		parts = append(parts, "sharing is paused and its configuration names folders (rootkeeper resume)")
	}
	return words.SafeText(strings.Join(parts, "; "))
}

// Short says why the server is held in a few words, for a tray line:
// "waiting for your decision on ~/work".
func (h *Hold) Short(home string) string {
	first := func(paths []string) string {
		s := words.HomeShort(paths[0], home)
		if len(paths) > 1 {
			s += fmt.Sprintf(" and %d more", len(paths)-1)
		}
		return s
	}
	switch {
	case len(h.Lost) > 0:
		return words.SafeText("lost " + first(h.Lost) + " from its configuration")
	case len(h.Denied) > 0:
		return words.SafeText("needs " + first(h.Denied) + ", which you denied")
	case len(h.Off) > 0:
		return words.SafeText("needs " + first(h.Off) + ", which is switched off")
	case len(h.Undecided) > 0:
		return words.SafeText("waiting for your decision on " + first(h.Undecided))
	}
	return "sharing is paused"
}

// SlotPath reports whether path is a slot of server, and whether it is a
// file.
func (s *State) SlotPath(server, path string) (isSlot, file bool) {
	srv, ok := s.Server(server)
	if !ok {
		return false, false
	}
	for _, sl := range srv.Slots {
		if sl.Path == path {
			return true, sl.File
		}
	}
	return false, false
}

// RootsChecked reports whether every root server may see by decision
// (enabled and allowed to it) has had its access check in snap. Until then
// what it may see is not known, and a server that holds its roots from its
// start (confined, or roots mode args or env) started now would be started
// again a moment later.
func RootsChecked(snap *Snapshot, server string) bool {
	if snap == nil {
		return false
	}
	x := snap.visibility()
	for _, r := range snap.State.Roots {
		if r.Enabled && x.allows(server, r.Path) {
			if _, checked := snap.Health[r.Path]; !checked {
				return false
			}
		}
	}
	return true
}

// ReachPaths are the paths a confined server may reach, sorted: its
// visible roots (or, for a bridged session, the given ones), its allowed
// slots, files as files, and the folders it needs to run (NeedPaths). It
// is what its ruleset holds read-write (with its temp and data folders),
// so a change of it restarts the server.
func ReachPaths(snap *Snapshot, server string, visible []string) []string {
	out := append(slices.Clone(visible), AllowedSlotPaths(snap, server)...)
	out = append(out, NeedPaths(snap, server)...)
	if snap.Policy.Broken != "" {
		out = nil // nothing is shared under a policy that cannot be read
	}
	home := homeForPolicy()
	out = slices.DeleteFunc(out, func(p string) bool { return snap.Policy.NeverGranted(p, home) != "" })
	slices.Sort(out)
	out = slices.Compact(out)
	if out == nil {
		out = []string{}
	}
	return out
}
