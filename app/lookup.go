package app

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrNotFound is wrapped by lookups that find nothing.
var ErrNotFound = errors.New("not found")

// Server returns the configured server called name.
func (s *State) Server(name string) (Server, bool) {
	for _, srv := range s.Servers {
		if srv.Name == name {
			return srv, true
		}
	}
	return Server{}, false
}

// Root returns the root whose canonical path is path.
func (s *State) Root(path string) (Root, bool) {
	for _, r := range s.Roots {
		if r.Path == path {
			return r, true
		}
	}
	return Root{}, false
}

// Decision returns the decision for (server, root path), if any.
func (s *State) Decision(server, rootPath string) (Decision, bool) {
	for _, d := range s.Decisions {
		if d.Server == server && d.Root == rootPath {
			return d, true
		}
	}
	return Decision{}, false
}

// FindRoot resolves what a person typed to name a root: a path (absolute, or
// relative to cwd, symlinks resolved) or a root's display name. A name shared
// by several roots is an error that says so.
func (s *State) FindRoot(ref, cwd string) (Root, error) {
	if ref == "" {
		return Root{}, fmt.Errorf("empty root: %w", ErrNotFound)
	}
	if looksLikePath(ref) {
		p := ref
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		p = filepath.Clean(p)
		if r, ok := s.Root(p); ok {
			return r, nil
		}
		if canon, err := filepath.EvalSymlinks(p); err == nil {
			if r, ok := s.Root(canon); ok {
				return r, nil
			}
		}
		for _, r := range s.Roots {
			if r.Given == p {
				return r, nil
			}
		}
	}
	var found []Root
	for _, r := range s.Roots {
		if r.Name == ref {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Root{}, fmt.Errorf("no root %q: %w", ref, ErrNotFound)
	}
	return Root{}, fmt.Errorf("root name %q is ambiguous (%d roots carry it); use the path", ref, len(found))
}

func looksLikePath(ref string) bool {
	return strings.ContainsRune(ref, filepath.Separator) || ref == "." || ref == ".."
}
