package hosts

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Known is a host Rootkeeper knows, with every file it looks at for it in a
// world, found or not.
type Known struct {
	ID     string      `json:"id"`
	Name   string      `json:"name"`
	Format Format      `json:"format"`
	Files  []KnownFile `json:"files"`
	// ProjectFiles are the host's files inside a project, relative to
	// it (globs allowed), looked for in every project Rootkeeper knows.
	ProjectFiles []string `json:"projectFiles,omitempty"`
}

// KnownFile is one file (or glob) a host reads, and the files found there.
type KnownFile struct {
	Path  string   `json:"path"`
	Found []string `json:"found,omitempty"`
}

// KnownHosts lists every host of the table with the files it reads in w.
func KnownHosts(w World) []Known {
	out := make([]Known, 0, len(Hosts))
	for _, h := range Hosts {
		k := Known{ID: h.ID, Name: h.Name, Format: h.Format}
		for _, p := range h.files(w) {
			kf := KnownFile{Path: p}
			if strings.ContainsAny(p, "*?[") {
				kf.Found, _ = filepath.Glob(p)
			} else if exists(p) {
				kf.Found = []string{p}
			}
			k.Files = append(k.Files, kf)
		}
		const dir = "/PROJECT"
		for _, p := range h.ProjectFiles(filepath.FromSlash(dir)) {
			rel, _ := filepath.Rel(filepath.FromSlash(dir), p)
			k.ProjectFiles = append(k.ProjectFiles, filepath.ToSlash(rel))
		}
		out = append(out, k)
	}
	return out
}

// WithKnownProjects adds the projects Rootkeeper knows to o.Projects, each
// once, in order: the folders of the state's roots, then the projects
// whose files it protected (so that those are listed and checked even
// when the project is no root).
func (o Options) WithKnownProjects() (Options, error) {
	st, err := o.Store.Load()
	if err != nil {
		return o, err
	}
	rec, err := loadRecord(o.Store.Dir())
	if err != nil {
		return o, err
	}
	o.Projects = slices.Clone(o.Projects)
	seen := map[string]bool{}
	for _, p := range o.Projects {
		seen[filepath.Clean(p)] = true
	}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			o.Projects = append(o.Projects, p)
		}
	}
	for _, r := range st.Roots {
		add(r.Path)
	}
	for _, fr := range rec.Files {
		add(fr.Project)
	}
	return o, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
