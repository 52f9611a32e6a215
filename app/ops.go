package app

import (
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"rootkeeper/app/secrets/spot"
	"rootkeeper/app/words"
)

// InputError is a mistake in what a person asked for: a bad value, a name
// that does not exist. Commands exit 2 on it.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// ExitCode is 2: bad usage or bad input.
func (e *InputError) ExitCode() int { return 2 }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// Clone returns a deep copy of s, so that a Snapshot never shares slices or
// maps with a State being edited.
func (s State) Clone() State {
	c := s
	c.Roots = slices.Clone(s.Roots)
	c.Decisions = slices.Clone(s.Decisions)
	c.SearchFolders = slices.Clone(s.SearchFolders)
	c.PrivateEnv = slices.Clone(s.PrivateEnv)
	c.Requests = slices.Clone(s.Requests)
	for i := range c.Requests {
		c.Requests[i].Calls = slices.Clone(c.Requests[i].Calls)
	}
	c.ConfineOffer = slices.Clone(s.ConfineOffer)
	c.ConfineFailures = slices.Clone(s.ConfineFailures)
	c.Needs = slices.Clone(s.Needs)
	c.Refusals = slices.Clone(s.Refusals)
	c.Once = slices.Clone(s.Once)
	for i := range c.Once {
		c.Once[i].Calls = slices.Clone(c.Once[i].Calls)
	}
	c.Servers = make([]Server, len(s.Servers))
	for i, srv := range s.Servers {
		srv.Args = slices.Clone(srv.Args)
		srv.KeepArgs = slices.Clone(srv.KeepArgs)
		srv.Slots = slices.Clone(srv.Slots)
		srv.Lost = slices.Clone(srv.Lost)
		srv.KeptData = slices.Clone(srv.KeptData)
		srv.Env = cloneMap(srv.Env)
		srv.Headers = cloneMap(srv.Headers)
		srv.Network = srv.Network.Clone()
		c.Servers[i] = srv
	}
	if s.Servers == nil {
		c.Servers = nil
	}
	if s.Sampling != nil {
		sc := *s.Sampling
		c.Sampling = &sc
	}
	if s.Settings != nil {
		st := *s.Settings
		c.Settings = &st
	}
	return c
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// AddRoot adds r, which must carry a canonical absolute Path. Adding a root
// exposes nothing by itself: servers see it only after a decision.
func (s *State) AddRoot(r Root) error {
	if err := ValidAbsPath(r.Path); err != nil {
		return &InputError{Msg: err.Error()}
	}
	if old, ok := s.Root(r.Path); ok {
		return inputErrorf("root %q is already added (as %q)", r.Path, old.Name)
	}
	if rule := NeverGranted(r.Path); rule != "" {
		return policyError("%s cannot be a root: the rule %q never grants it", r.Path, rule)
	}
	if r.Name == "" {
		r.Name = baseName(r.Path)
	}
	if r.Given == r.Path {
		r.Given = ""
	}
	s.Roots = append(s.Roots, r)
	slices.SortFunc(s.Roots, func(a, b Root) int { return compareStrings(a.Path, b.Path) })
	return nil
}

// RemoveRoot forgets the root at path and every decision about it.
func (s *State) RemoveRoot(path string) error {
	i := slices.IndexFunc(s.Roots, func(r Root) bool { return r.Path == path })
	if i < 0 {
		return inputErrorf("no root %q", path)
	}
	s.Roots = slices.Delete(s.Roots, i, i+1)
	s.Decisions = slices.DeleteFunc(s.Decisions, func(d Decision) bool { return d.Root == path })
	return nil
}

// SetEnabled turns the root at path on or off for everyone.
func (s *State) SetEnabled(path string, enabled bool) error {
	i := slices.IndexFunc(s.Roots, func(r Root) bool { return r.Path == path })
	if i < 0 {
		return inputErrorf("no root %q", path)
	}
	s.Roots[i].Enabled = enabled
	return nil
}

// UpdateRoot applies fn to the root at path (to rename it or record its
// branch); fn must not change the Path.
func (s *State) UpdateRoot(path string, fn func(*Root)) error {
	i := slices.IndexFunc(s.Roots, func(r Root) bool { return r.Path == path })
	if i < 0 {
		return inputErrorf("no root %q", path)
	}
	fn(&s.Roots[i])
	s.Roots[i].Path = path
	return nil
}

// AddServer adds a validated server. A server with that name must not exist.
func (s *State) AddServer(srv Server) error {
	if err := ValidateServer(srv); err != nil {
		return err
	}
	if _, ok := s.Server(srv.Name); ok {
		return inputErrorf("server %q already exists", srv.Name)
	}
	s.Servers = append(s.Servers, srv)
	slices.SortFunc(s.Servers, func(a, b Server) int { return compareStrings(a.Name, b.Name) })
	return nil
}

// replaceServer changes the configuration of an existing server; PutServer
// is the way in. A change of what the server runs (see SameProgram) makes
// it a new program as far as consent goes: its decisions are dropped,
// unless keepDecisions says the person saw the old and the new program and
// chose to keep them. A change of anything else (roots mode, sampling)
// keeps them. It reports how many decisions were dropped.
func (s *State) replaceServer(srv Server, keepDecisions bool) (dropped int, err error) {
	if err := ValidateServer(srv); err != nil {
		return 0, err
	}
	i := slices.IndexFunc(s.Servers, func(x Server) bool { return x.Name == srv.Name })
	if i < 0 {
		return 0, inputErrorf("no server %q", srv.Name)
	}
	if !keepDecisions && !SameProgram(s.Servers[i], srv) {
		// The folders the old program needed to run go with its
		// decisions: they were allowed to what it ran.
		n := len(s.Decisions) + len(s.Needs)
		s.Decisions = slices.DeleteFunc(s.Decisions, func(d Decision) bool { return d.Server == srv.Name })
		s.Needs = slices.DeleteFunc(s.Needs, func(x Need) bool { return x.Server == srv.Name })
		s.Refusals = slices.DeleteFunc(s.Refusals, func(x Refusal) bool { return x.Server == srv.Name })
		dropped = n - len(s.Decisions) - len(s.Needs)
	}
	s.Servers[i] = srv
	return dropped, nil
}

// SameProgram reports whether a and b run the same program: the same
// command, arguments, environment and working folder for a stdio server, the
// same URL and headers for a remote one. A server's identity for consent is
// what it runs, not its name: a config that redefines "filesystem" as
// another package must not inherit the folders the old one was allowed.
// Secrets (spot) are not the program: one in clear and the keyring
// reference it was sealed into, or another secret in its place, compare
// equal, wherever they are.
func SameProgram(a, b Server) bool {
	if a.Type != b.Type || a.Command != b.Command || a.Cwd != b.Cwd {
		return false
	}
	a, b = secretsShown(a), secretsShown(b)
	return slices.Equal(a.Args, b.Args) && maps.Equal(a.Env, b.Env) &&
		a.URL == b.URL && maps.Equal(a.Headers, b.Headers)
}

// secretsShown is srv with every secret and every reference to one
// spot.Redacted.
func secretsShown(srv Server) Server {
	EachSecretField(&srv, func(f SecretField) string {
		return spot.Replace(f.Value, f.Hidden(srv.Name), spot.Redacted)
	})
	return srv
}

// RemoveServer forgets a server and every decision about it.
func (s *State) RemoveServer(name string) error {
	i := slices.IndexFunc(s.Servers, func(x Server) bool { return x.Name == name })
	if i < 0 {
		return inputErrorf("no server %q", name)
	}
	s.Servers = slices.Delete(s.Servers, i, i+1)
	s.Decisions = slices.DeleteFunc(s.Decisions, func(d Decision) bool { return d.Server == name })
	s.Requests = slices.DeleteFunc(s.Requests, func(r Request) bool { return r.Server == name })
	s.Once = slices.DeleteFunc(s.Once, func(o Once) bool { return o.Server == name })
	s.Needs = slices.DeleteFunc(s.Needs, func(x Need) bool { return x.Server == name })
	s.Refusals = slices.DeleteFunc(s.Refusals, func(x Refusal) bool { return x.Server == name })
	return nil
}

// Decide records a person's decision for (server, root), replacing any
// earlier one.
func (s *State) Decide(d Decision) error {
	if _, ok := s.Server(d.Server); !ok {
		return inputErrorf("no server %q", d.Server)
	}
	if _, ok := s.Root(d.Root); !ok {
		// A file named in the server's configuration is decided as a
		// file: it is no root, nobody else sees it.
		if _, file := s.SlotPath(d.Server, d.Root); !file {
			return inputErrorf("no root %q", d.Root)
		}
	}
	if d.Verdict != Allow && d.Verdict != Deny {
		return inputErrorf("invalid verdict %q (want allow or deny)", d.Verdict)
	}
	if d.Verdict == Allow {
		if err := policyRefusesGrant(d.Root); err != nil {
			return err
		}
	}
	if d.Scope == "" {
		d.Scope = Always
	}
	if d.Scope != Always && d.Scope != UntilQuit {
		return inputErrorf("invalid scope %q (want always or until-quit)", d.Scope)
	}
	if d.At.IsZero() {
		d.At = time.Now().UTC()
	}
	s.Revoke(d.Server, d.Root)
	s.dropRequest(d.Server, d.Root) // decided: no longer a question
	s.insertDecision(d)
	return nil
}

// byPair orders decisions by server, then root.
func byPair(a, b Decision) int {
	if c := compareStrings(a.Server, b.Server); c != 0 {
		return c
	}
	return compareStrings(a.Root, b.Root)
}

// insertDecision adds d (whose pair has no decision) and leaves the
// decisions sorted by pair: in its place when they are in strict order
// already, as they are but in a hand-edited file (the one order there is,
// which sorting them all would find), sorted otherwise. A grant to fifty
// servers sorted the decisions fifty times.
func (s *State) insertDecision(d Decision) {
	for i := 1; i < len(s.Decisions); i++ {
		if byPair(s.Decisions[i-1], s.Decisions[i]) >= 0 {
			s.Decisions = append(s.Decisions, d)
			slices.SortFunc(s.Decisions, byPair)
			return
		}
	}
	i, _ := slices.BinarySearchFunc(s.Decisions, d, byPair)
	s.Decisions = slices.Insert(s.Decisions, i, d)
}

// Revoke forgets the decision for (server, root), so the root is undecided
// (and so not visible) for that server again. It reports whether there was a
// decision.
func (s *State) Revoke(server, rootPath string) bool {
	n := len(s.Decisions)
	s.Decisions = slices.DeleteFunc(s.Decisions, func(d Decision) bool {
		return d.Server == server && d.Root == rootPath
	})
	return len(s.Decisions) != n
}

// SetPaused pauses (or resumes) all sharing: while paused no server sees
// any root and servers whose configuration names folders are held; nothing
// is forgotten.
func (s *State) SetPaused(paused bool) { s.Paused = paused }

// DropUntilQuit forgets every decision, and every folder a server needs
// to run, scoped until quit. The long-running app calls it when it starts,
// since the app those decisions were made for has quit.
func (s *State) DropUntilQuit() int {
	n := len(s.Decisions) + len(s.Needs)
	s.Decisions = slices.DeleteFunc(s.Decisions, func(d Decision) bool { return d.Scope == UntilQuit })
	s.Needs = slices.DeleteFunc(s.Needs, func(x Need) bool { return x.Scope == UntilQuit })
	return n - len(s.Decisions) - len(s.Needs)
}

// ValidateServer checks a server's configuration and names the first bad
// value it finds.
func ValidateServer(srv Server) error {
	if err := validServerName(srv.Name); err != nil {
		return err
	}
	switch srv.Mode() {
	case RootsProtocol, RootsArgs, RootsEnv, RootsOff:
	default:
		return inputErrorf("invalid roots mode %q for server %q (want protocol, args, env or off)", srv.RootsMode, srv.Name)
	}
	switch srv.SamplingMode() {
	case SamplingReview, SamplingOff:
	default:
		return inputErrorf("invalid sampling mode %q for server %q (want review or off)", srv.Sampling, srv.Name)
	}
	switch srv.HostRootsMode() {
	case HostRootsRequest, HostRootsFollow:
	default:
		return inputErrorf("invalid host-roots mode %q for server %q (want request or follow)", srv.HostRoots, srv.Name)
	}
	switch srv.Type {
	case TransportStdio:
		if strings.TrimSpace(srv.Command) == "" {
			return inputErrorf("server %q has no command", srv.Name)
		}
		if srv.URL != "" {
			return inputErrorf("server %q is stdio but has a url %q", srv.Name, spot.ShowURL(srv.Name, srv.URL))
		}
		for k := range srv.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return inputErrorf("invalid environment variable name %q for server %q", k, srv.Name)
			}
		}
	case TransportHTTP, TransportSSE:
		u, err := url.Parse(srv.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return inputErrorf("invalid url %q for server %q (want http:// or https:// with a host)", spot.ShowURL(srv.Name, srv.URL), srv.Name)
		}
		if srv.Command != "" {
			return inputErrorf("server %q is %s but has a command %q", srv.Name, srv.Type, srv.Command)
		}
		if srv.Mode() == RootsArgs || srv.Mode() == RootsEnv {
			return inputErrorf("roots mode %q needs a stdio server; %q is %s", srv.Mode(), srv.Name, srv.Type)
		}
		for k := range srv.Headers {
			if !validHeaderName(k) {
				return inputErrorf("invalid header name %q for server %q", k, srv.Name)
			}
		}
	default:
		return inputErrorf("invalid server type %q for server %q (want stdio, http or sse)", srv.Type, srv.Name)
	}
	return nil
}

func validServerName(name string) error {
	if name == "" {
		return inputErrorf("server name is empty")
	}
	if len(name) > 64 {
		return inputErrorf("server name %q is longer than 64 characters", name)
	}
	if strings.TrimSpace(name) != name || strings.HasPrefix(name, "-") {
		return inputErrorf("invalid server name %q (no leading dash or surrounding spaces)", name)
	}
	for _, r := range name {
		// A name is shown in terminals, labels, log file names and command
		// hints: nothing in it may hide, reorder or split text, or name a
		// path (/, \) or a drive or scheme (:).
		if words.UnsafeRune(r) || strings.ContainsRune(`/\:`, r) {
			return inputErrorf("invalid server name %q (no control or invisible characters, '/', '\\' or ':')", name)
		}
	}
	return nil
}

// Program says in one line what a server runs, for a person deciding about
// it: the command line (each word shell-quoted), the names (never the
// values) of its environment variables and its working folder; or the
// transport, URL and header names of a remote server. Secrets in the
// arguments and the URL, and references to the keyring, are shown as
// "(secret)" (spot). Untrusted text in it is made safe with words.SafeText.
func Program(srv Server) string {
	var b strings.Builder
	if srv.Type == TransportStdio {
		argv := make([]string, 0, 1+len(srv.Args))
		for _, w := range append([]string{srv.Command}, spot.ShowArgs(srv.Name, srv.Args)...) {
			argv = append(argv, words.ShellQuote(w))
		}
		b.WriteString("runs " + strings.Join(argv, " "))
		if len(srv.Env) > 0 {
			b.WriteString(" · env " + strings.Join(slices.Sorted(maps.Keys(srv.Env)), ", "))
		}
		if srv.Cwd != "" {
			b.WriteString(" · in " + srv.Cwd)
		}
	} else {
		b.WriteString(srv.Type + " " + spot.ShowURL(srv.Name, srv.URL))
		if len(srv.Headers) > 0 {
			b.WriteString(" · headers " + strings.Join(slices.Sorted(maps.Keys(srv.Headers)), ", "))
		}
	}
	return words.SafeText(b.String())
}

func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		if c > unicode.MaxASCII || c <= ' ' || strings.ContainsRune("()<>@,;:\\\"/[]?={}", c) {
			return false
		}
	}
	return true
}

func baseName(p string) string {
	// Both separators: on Windows a path is C:\a\b (and may hold /).
	seps := "/" + string(filepath.Separator)
	p = strings.TrimRight(p, seps)
	if i := strings.LastIndexAny(p, seps); i >= 0 {
		p = p[i+1:]
	}
	if p == "" {
		return string(filepath.Separator)
	}
	return p
}
