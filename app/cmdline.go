package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// MovedFolder is a folder taken off a server's command line (or out of its
// environment) to become a request.
type MovedFolder struct {
	// Path is the folder, canonical.
	Path string
	// Given is the argument or value as it was written.
	Given string
	// Env names the variable it was the value of; empty for an argument.
	Env string
}

// TakeFolders takes the folders off a stdio server's command line: every
// argument, and every environment value, that names an existing folder
// (absolute, ~/…, or relative to the server's working folder) is removed,
// unless it is one of srv.KeepArgs. A folder on a command line is a request,
// not a grant: the person decides it like any other root, and a server in
// roots mode args or env gets it back on its command line once allowed.
// home resolves ~. The server is returned without them.
func TakeFolders(srv Server, home string) (Server, []MovedFolder) {
	if srv.Type != TransportStdio {
		return srv, nil
	}
	var moved []MovedFolder
	var args []string
	for _, a := range srv.Args {
		if p, ok := folderArg(a, srv, home); ok {
			moved = append(moved, MovedFolder{Path: p, Given: a})
			continue
		}
		args = append(args, a)
	}
	env := srv.Env
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range srv.Env {
			if !yield(k) {
				return
			}
		}
	}) {
		if p, ok := folderArg(srv.Env[k], srv, home); ok {
			if len(env) == len(srv.Env) {
				env = cloneMap(srv.Env)
			}
			delete(env, k)
			moved = append(moved, MovedFolder{Path: p, Given: srv.Env[k], Env: k})
		}
	}
	if len(moved) == 0 {
		return srv, nil
	}
	srv.Args, srv.Env = args, env
	if len(srv.Env) == 0 {
		srv.Env = nil
	}
	return srv, moved
}

// folderArg reports whether a names an existing folder, and which.
func folderArg(a string, srv Server, home string) (string, bool) {
	if a == "" || slices.Contains(srv.KeepArgs, a) || strings.HasPrefix(a, "-") || strings.ContainsAny(a, "\x00\n") {
		return "", false
	}
	p := a
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return "", false
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	case filepath.IsAbs(p):
	case srv.Cwd != "" && (strings.HasPrefix(p, ".") || strings.ContainsRune(p, filepath.Separator)):
		// Relative to the server's working folder, when it says so (./x,
		// x/y): a bare word such as "stdio" is an argument, whatever
		// folder happens to carry that name.
		p = filepath.Join(srv.Cwd, p)
	default:
		return "", false
	}
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		return "", false
	}
	canon, _, err := CanonicalPath(p, "/")
	if err != nil {
		return "", false
	}
	return canon, true
}

// RequestFolders records the moved folders as requests of server.
func (s *State) RequestFolders(server string, moved []MovedFolder) error {
	now := time.Now().UTC()
	for _, m := range moved {
		if _, err := s.AddRequest(server, m.Path, FromCommandLine, now); err != nil {
			return err
		}
	}
	return nil
}
