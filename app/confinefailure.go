package app

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"rootkeeper/app/words"
)

// A ConfineFailure says that a confined server stopped (it exited, or did
// not answer initialize) after reaching for something its ruleset does
// not hold: what it reached for, and the way out the person is offered —
// allow that folder for that server (Folder, when there is one a person
// could decide on: State.AllowAsked), or run the server unconfined
// (SetConfinement). It is kept in the state,
// so that `status` and the window show it whichever process saw it (a
// bridge with no app running included), and it goes when the server
// starts confined again or the person answers.
type ConfineFailure struct {
	Server string    `json:"server"`
	At     time.Time `json:"at"`
	// Tried is what it reached for: a path, or "a unix socket".
	Tried string `json:"tried"`
	// Op is what it tried (read, list, write, create, rename, execute,
	// connect), when known.
	Op string `json:"op,omitempty"`
	// Folder is the folder the person may allow instead of running it
	// unconfined; empty where none would help (a unix socket, a system
	// file).
	Folder string `json:"folder,omitempty"`
	// Own says that Folder is a place of the server's own right in the
	// home folder (a settings folder it makes there, such as
	// ~/.claude-server-commander): allowing it makes it when missing.
	Own bool `json:"own,omitempty"`
	// Detail is the line of its error output that says so, if any.
	Detail string `json:"detail,omitempty"`
	// Destination is a network destination its network did not let it
	// reach ("unix:/run/mysqld/mysqld.sock", "203.0.113.7:443"): the way
	// out is allowing it there (State.NetworkAllow).
	Destination string `json:"destination,omitempty"`
}

// UnixSocket is ConfineFailure.Tried for a server refused a unix socket
// (below Landlock ABI 9 a confined server gets none).
const UnixSocket = "a unix socket"

// ConfineFailureOf returns the failure of server, if one is recorded.
func (s *State) ConfineFailureOf(server string) (ConfineFailure, bool) {
	for _, f := range s.ConfineFailures {
		if f.Server == server {
			return f, true
		}
	}
	return ConfineFailure{}, false
}

// RecordConfineFailure records f (replacing an earlier one of its
// server), for a confined server only.
func (s *State) RecordConfineFailure(f ConfineFailure) {
	if srv, ok := s.Server(f.Server); !ok || !srv.Confine {
		return
	}
	s.ClearConfineFailure(f.Server)
	f.Detail = words.SafeText(truncate(f.Detail, 300))
	s.ConfineFailures = append(s.ConfineFailures, f)
}

// ClearConfineFailure forgets server's failure; it reports whether there
// was one.
func (s *State) ClearConfineFailure(server string) bool {
	n := len(s.ConfineFailures)
	s.ConfineFailures = slices.DeleteFunc(s.ConfineFailures, func(f ConfineFailure) bool { return f.Server == server })
	return len(s.ConfineFailures) != n
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// SetConfinement turns server's confinement on or off: the person's
// decision, like a grant (the caller audits it: audit.ViaConfinement), and
// revocable the same way. Turning it off is how a server that fails
// confined runs as it would without Rootkeeper; its failure is forgotten
// either way.
func (s *State) SetConfinement(server string, on bool) error {
	i := slices.IndexFunc(s.Servers, func(srv Server) bool { return srv.Name == server })
	if i < 0 {
		return inputErrorf("no server %q", server)
	}
	if s.Servers[i].Type != TransportStdio {
		return inputErrorf("server %q is remote (%s): only stdio servers can be confined", server, s.Servers[i].Type)
	}
	if !on && ConfinementRequired() {
		return policyError("server %q cannot run unconfined: every stdio server runs confined here", server)
	}
	s.Servers[i].Confine = on
	if !on {
		s.Servers[i].ConfineRequired = false
	}
	s.ClearConfineFailure(server)
	s.ConfineOffer = slices.DeleteFunc(s.ConfineOffer, func(n string) bool { return n == server })
	return nil
}

// Text says what f means and what the person can do, the folder first,
// with whole paths shortened against home: "kubernetes stopped while
// confined: it tried to read ~/.kube/config — allow ~/.kube for
// kubernetes, or run it unconfined".
func (f ConfineFailure) Text(home string) string {
	if f.Own {
		return words.SafeText(f.Server + " wants to keep its own settings in " + words.HomeShort(f.Folder, home) + ", and stopped while confined — allow " +
			words.HomeShort(f.Folder, home) + " for " + f.Server + ", or run it unconfined")
	}
	if f.Destination != "" {
		return words.SafeText(f.Server + " stopped while confined: it tried to connect to " + f.Destination + " — allow it on its network, or run it unconfined")
	}
	what := words.HomeShort(f.Tried, home)
	if f.Op == OpMkdir {
		what = "create " + what
	} else if f.Op != "" && f.Tried != UnixSocket {
		what = f.Op + " " + what
	} else if f.Tried == UnixSocket {
		what = "open " + f.Tried
	} else {
		what = "reach " + what
	}
	out := f.Server + " stopped while confined: it tried to " + what
	if f.Folder != "" {
		out += " — allow " + words.HomeShort(f.Folder, home) + " for " + f.Server + ", or run it unconfined"
	} else {
		out += " — run it unconfined to use it"
	}
	return words.SafeText(out)
}

// WayOut are the commands that answer f, in the order they are offered:
// allow its folder for the server, when it has one (State.AllowAsked: a
// folder the server alone needs to run, made if it is a settings folder
// of its own), then run the server unconfined.
func (f ConfineFailure) WayOut() []string {
	var out []string
	if f.Folder != "" {
		out = append(out, "rootkeeper grant "+words.ShellQuote(f.Server)+" "+words.ShellQuote(f.Folder))
	}
	if f.Destination != "" {
		out = append(out, "rootkeeper servers network "+words.ShellQuote(f.Server)+" allow "+words.ShellQuote(f.Destination))
	}
	return append(out, "rootkeeper servers unconfine "+words.ShellQuote(f.Server))
}

// deniedPath finds the path in a line of error output that says a path
// was refused: node's "EACCES: permission denied, open '/x'", a C
// program's "open /x: Permission denied", Python's "[Errno 13]
// Permission denied: '/x'".
var deniedPath = regexp.MustCompile(`(?:EACCES|EPERM)[^'"]*['"](/[^'"]+)['"]|(?:open|opendir|mkdir|stat|access|unlink|rename)\(?\s*['"]?(/[^\s'":)]+)['"]?\)?:? [^\n]*[Pp]ermission denied|[Pp]ermission denied: ['"](/[^'"]+)['"]`)

// socketDenied matches error output that says a unix socket was refused
// (the confining filter's EACCES on socket(AF_UNIX)).
var socketDenied = regexp.MustCompile(`socket\(\)[^\n]*[Pp]ermission denied|EACCES[^\n]*socket|socket[^\n]*EACCES`)

// DiagnoseConfineFailure works out what a confined server that stopped
// reached for, from what it tried past its ruleset (refused, most recent
// last; each with the folder a person would be asked about, or "") and its
// error output. ok is false when nothing points at the confinement: the
// server failed for a reason of its own.
func DiagnoseConfineFailure(server string, refused []RefusedAttempt, stderr string, at time.Time, home string) (ConfineFailure, bool) {
	f, ok := diagnose(server, refused, stderr, at, home)
	if ok && home != "" && f.Tried != UnixSocket {
		f.Folder, f.Own = homeFolderFor(f, home)
	}
	return f, ok
}

// homeFolderFor is the folder to offer for a path in the home folder: for
// something the server makes (create, write) right in the home folder or in
// ~/.config, ~/.local/share or ~/.local/state, the folder it makes there
// is its own place (own); for anything else the folder right in the home
// folder, or in ~/.config and the like, that holds it (~/Documents for
// ~/Documents/tasks.json, ~/.kube for ~/.kube/config). Never the home
// folder itself: a file right in it gets no folder (only running the
// server unconfined is offered).
func homeFolderFor(f ConfineFailure, home string) (folder string, own bool) {
	if !IsWithin(f.Tried, home) {
		return f.Folder, false
	}
	makes := OpWrites(f.Op) && f.Op != OpRename
	for _, base := range []string{filepath.Join(home, ".config"), filepath.Join(home, ".local", "share"), filepath.Join(home, ".local", "state"), home} {
		if !IsWithin(f.Tried, base) {
			continue
		}
		rel, _ := filepath.Rel(base, f.Tried)
		first, rest, _ := strings.Cut(rel, string(filepath.Separator))
		place := filepath.Join(base, first)
		switch {
		case makes && (base != home || strings.HasPrefix(first, ".")) && (rest != "" || f.Op == OpMkdir || strings.Contains(f.Detail, "mkdir")):
			return place, true
		case rest == "":
			return "", false // a file right in the home folder
		}
		// Another program's settings (~/.kube, ~/.config/gcloud) or a
		// folder of the person's: allowed, it is this server's alone
		// (State.AllowAsked), never a root for everyone.
		return place, false
	}
	return "", false
}

func diagnose(server string, refused []RefusedAttempt, stderr string, at time.Time, home string) (ConfineFailure, bool) {
	f := ConfineFailure{Server: server, At: at}
	lines := strings.Split(stderr, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		if m := deniedPath.FindStringSubmatch(line); m != nil {
			p := m[1] + m[2] + m[3]
			f.Tried, f.Detail = filepath.Clean(p), strings.TrimSpace(line)
			for j := len(refused) - 1; j >= 0; j-- {
				if r := refused[j]; r.Path == f.Tried || IsWithin(f.Tried, r.Path) || IsWithin(r.Path, f.Tried) {
					f.Op, f.Folder = r.Op, r.Folder
					break
				}
			}
			if f.Folder == "" {
				f.Folder = nearestFolder(f.Tried)
			}
			return f, true
		}
		if m := connectDenied.FindStringSubmatch(line); m != nil || socketDenied.MatchString(line) {
			f.Tried, f.Op, f.Detail = UnixSocket, "connect", strings.TrimSpace(line)
			if dest := refusedDestination(refused, m); dest != "" {
				f.Tried, f.Destination = dest, dest
			}
			return f, true
		}
	}
	// Nothing said: the last attempt that could be decided on, or that
	// made something (a server's own place).
	for j := len(refused) - 1; j >= 0; j-- {
		if r := refused[j]; r.Folder != "" || OpWrites(r.Op) && r.Op != OpRename {
			f.Tried, f.Op, f.Folder = r.Path, r.Op, r.Folder
			return f, true
		}
		if r := refused[j]; r.Op == OpConnect && strings.HasPrefix(r.Path, "unix:") && refusalSaid.MatchString(stderr) {
			// A socket past its folders, refused, and it said it was
			// refused something (Python's "[Errno 13] Permission
			// denied" names no path): a database it needs.
			f.Tried, f.Op, f.Destination = r.Path, OpConnect, r.Path
			return f, true
		}
	}
	return f, false
}

// refusalSaid matches error output that says something was refused.
var refusalSaid = regexp.MustCompile(`EACCES|EPERM|[Pp]ermission denied|Errno 13|\(13\)`)

// connectDenied matches error output that says a connect was refused and
// names where to (node's "connect EACCES /run/mysqld/mysqld.sock",
// libpq's "connection to server on socket "/run/postgresql/.s.PGSQL.5432"
// failed: Permission denied", MySQL's "through socket
// '/run/mysqld/mysqld.sock' (13)").
var connectDenied = regexp.MustCompile(`connect E(?:ACCES|PERM) (\S+)|on socket "(/[^"]+)" failed: [Pp]ermission denied|through socket '(/[^']+)' \(13\)`)

// refusedDestination is the network destination a refused connect names:
// the one the error output names (m, connectDenied's match) when the run
// refused it, else the last one the run refused; "" for none.
func refusedDestination(refused []RefusedAttempt, m []string) string {
	named := ""
	if m != nil {
		named = m[1] + m[2] + m[3]
		if strings.HasPrefix(named, "/") {
			named = "unix:" + filepath.Clean(named)
		}
	}
	last := ""
	for j := len(refused) - 1; j >= 0; j-- {
		if r := refused[j]; r.Op == OpConnect {
			if r.Path == named {
				return named
			}
			if last == "" {
				last = r.Path
			}
		}
	}
	if named != "" && strings.HasPrefix(named, "unix:") {
		return named
	}
	return last
}

// A RefusedAttempt is an attempt of a confined server past its ruleset
// that was refused: the path, what it tried, and the folder a person would
// be asked about ("" for what is never asked about).
type RefusedAttempt struct {
	Path, Op, Folder string
}

// nearestFolder is the folder a refused path that was never asked about
// would be allowed as: the path's own folder, never / nor a system folder.
func nearestFolder(path string) string {
	dir := filepath.Dir(path)
	for _, d := range neverAsked {
		if dir == d || IsWithin(dir, d) {
			return ""
		}
	}
	if dir == "/" {
		return ""
	}
	return dir
}
