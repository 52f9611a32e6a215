package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"rootkeeper/app/atomicfile"
	"rootkeeper/app/words"
)

// SeenProjectsFileName, in the state folder, lists the projects the
// scans at start found before, so that a later start mentions only what is
// new. It is a record of what was shown, not of any decision.
const SeenProjectsFileName = "projects-seen.json"

// seenProjects is the file's content.
type seenProjects struct {
	Version int       `json:"version"`
	At      time.Time `json:"at"`
	Paths   []string  `json:"paths"`
}

// LoadSeenProjects reads the projects earlier start scans found in the
// state folder dir. ok is false when no scan at start ever finished there
// (the first launch); a file that cannot be read counts as absent.
func LoadSeenProjects(dir string) (seen map[string]bool, ok bool) {
	data, err := os.ReadFile(filepath.Join(dir, SeenProjectsFileName))
	if err != nil {
		return nil, false
	}
	var f seenProjects
	if json.Unmarshal(data, &f) != nil {
		return nil, false
	}
	seen = make(map[string]bool, len(f.Paths))
	for _, p := range f.Paths {
		seen[p] = true
	}
	return seen, true
}

// SaveSeenProjects records paths (with those seen before, when merged
// with them by the caller) in the state folder dir, atomically.
func SaveSeenProjects(dir string, paths []string, now time.Time) error {
	paths = slices.Clone(paths)
	slices.Sort(paths)
	data, err := json.MarshalIndent(seenProjects{Version: 1, At: now.UTC(), Paths: slices.Compact(paths)}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, SeenProjectsFileName), append(data, '\n'), atomicfile.Options{TempPrefix: SeenProjectsFileName + ".tmp-"}); err != nil {
		return fmt.Errorf("saving the projects seen: %w", err)
	}
	return nil
}

// Offerable are the candidates worth offering as folders to add: the
// repositories and lone projects (not a project inside a repository that
// is found too, not a submodule or a bare repository), not a root yet, not
// the home folder or the file system's root, and, when seen is not nil,
// not seen before. Sorted naturally by path.
func Offerable(st *State, found []Candidate, seen map[string]bool, home string) []Candidate {
	inFound := map[string]bool{}
	for _, c := range found {
		inFound[c.Path] = true
	}
	var out []Candidate
	done := map[string]bool{}
	for _, c := range found {
		switch {
		case done[c.Path], c.Bare, c.Submodule:
			continue
		case c.Repo != "" && c.Repo != c.Path && inFound[c.Repo]:
			continue
		case c.Path == filepath.Clean(home), c.Path == string(filepath.Separator), filepath.Dir(c.Path) == c.Path:
			continue
		case seen != nil && seen[c.Path]:
			continue
		}
		if _, ok := st.Root(c.Path); ok {
			continue
		}
		done[c.Path] = true
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Candidate) int { return words.CompareNatural(a.Path, b.Path) })
	return out
}

// CandidateGroup is candidates that share a parent folder.
type CandidateGroup struct {
	Parent     string
	Candidates []Candidate
}

// GroupByParent groups candidates (sorted as Offerable sorts them) by the
// folder that holds them, the groups in natural order of their folders.
func GroupByParent(cands []Candidate) []CandidateGroup {
	var out []CandidateGroup
	at := map[string]int{}
	for _, c := range cands {
		p := filepath.Dir(c.Path)
		i, ok := at[p]
		if !ok {
			i = len(out)
			at[p] = i
			out = append(out, CandidateGroup{Parent: p})
		}
		out[i].Candidates = append(out[i].Candidates, c)
	}
	slices.SortStableFunc(out, func(a, b CandidateGroup) int { return words.CompareNatural(a.Parent, b.Parent) })
	return out
}

// AddFound adds the roots found by a scan (made with NewRoot), enabled and
// decided for nobody: adding a folder shares it with no server; each
// server is asked before it sees any. Roots already there are left as they
// are. It returns how many were added.
func (s *State) AddFound(roots []Root) int {
	n := 0
	for _, r := range roots {
		if _, ok := s.Root(r.Path); ok {
			continue
		}
		r.Enabled = true
		if s.AddRoot(r) == nil {
			n++
		}
	}
	return n
}

// SourceOf is the Source a root found as c gets.
func SourceOf(c Candidate) Source {
	if c.Kind == "repo" {
		return SourceGit
	}
	return SourceMarker
}
