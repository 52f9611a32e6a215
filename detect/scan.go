package detect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Candidate is a folder the scan found: a repository or a project. It has
// the fields of app.Candidate, in the same order, so that main converts one
// to the other with app.Candidate(c).
type Candidate struct {
	Path      string   `json:"path"`              // absolute, never through a symlinked folder
	Kind      string   `json:"kind"`              // "repo" or "project"
	Markers   []string `json:"markers,omitempty"` // project marker files found, sorted
	Branch    string   `json:"branch,omitempty"`  // short commit for a detached HEAD
	Remote    string   `json:"remote,omitempty"`  // the first remote's URL, credentials stripped
	Repo      string   `json:"repo,omitempty"`    // enclosing repository's path (a submodule's parent)
	Worktree  bool     `json:"worktree,omitempty"`
	Submodule bool     `json:"submodule,omitempty"`
	Bare      bool     `json:"bare,omitempty"`
}

// Kinds of Candidate.
const (
	KindRepo    = "repo"
	KindProject = "project"
)

// Request says where and how deep to look; it mirrors app.ScanRequest.
type Request struct {
	Dirs  []string // search folders; empty means DefaultSearchFolders of the home folder
	Depth int      // levels of folders read below each search folder; 0 means the default
	Skip  []string // folder names to skip on top of DefaultSkip (an absolute path skips that folder)
}

// Progress mirrors app.ScanProgress.
type Progress struct {
	Visited int    // folders read so far
	Found   int    // candidates so far
	Current string // a folder being read
}

// Summary mirrors app.ScanSummary.
type Summary struct {
	Visited    int
	Found      int
	Unreadable []string // folders that could not be read and were skipped, sorted
}

// Depths. A search folder is read to DefaultDepth levels below it: deep
// enough for Go's GOPATH layout and nested monorepos, a guard against
// runaway trees rather than a budget (dependency and cache folders are
// skipped by name anyway). The home folder itself, when it is a search
// folder and Request.Depth is 0, is read only HomeDepth levels deep: below
// that a home folder is mostly application data, and the usual project
// folders (~/src, ~/code, ...) are search folders of their own.
const (
	DefaultDepth = 24
	HomeDepth    = 3
)

// ProgressInterval is the least time between two progress events.
const ProgressInterval = 50 * time.Millisecond

// Scanner walks search folders. The zero value is ready to use.
type Scanner struct {
	// Workers is the number of goroutines reading folders; 0 means four per
	// CPU, since reading folders mostly waits on the disk when it is cold.
	Workers int
	// CrossFilesystems lets the walk enter mount points of another file
	// system than the search folder's own. /proc, /sys and /dev are never
	// entered.
	CrossFilesystems bool
	// Home is the home folder for the defaults; "" means os.UserHomeDir.
	Home string
	// Cache, when set, lets a scan skip the folders unchanged since the
	// last scan that used it (see Cache). Keep the Scanner, or the Cache,
	// between scans.
	Cache *Cache
	// JSONC turns JSON with comments and trailing commas (a VS Code
	// .code-workspace file) into plain JSON: Rootkeeper passes its one
	// reader of such files (app/serverentry), which detect does not
	// import. nil reads workspace files as plain JSON.
	JSONC func([]byte) ([]byte, error)
}

// RootError is the error for a search folder that cannot be scanned.
type RootError struct {
	Path string
	Err  error
}

func (e *RootError) Error() string {
	switch {
	case errors.Is(e.Err, fs.ErrNotExist):
		return fmt.Sprintf("search folder %q does not exist", e.Path)
	case errors.Is(e.Err, errNotDir):
		return fmt.Sprintf("search folder %q is not a folder", e.Path)
	case errors.Is(e.Err, errSystemDir):
		return fmt.Sprintf("search folder %q is a system folder (/proc, /sys, /dev are never scanned)", e.Path)
	}
	msg := e.Err.Error()
	var pe *fs.PathError
	if errors.As(e.Err, &pe) {
		msg = pe.Err.Error()
	}
	return fmt.Sprintf("search folder %q cannot be read: %s", e.Path, msg)
}

func (e *RootError) Unwrap() error { return e.Err }

var (
	errNotDir    = errors.New("not a folder")
	errSystemDir = errors.New("system folder")
)

// systemDirs are never entered, whatever the options.
var systemDirs = []string{"/proc", "/sys", "/dev"}

func inSystemDir(path string) bool {
	for _, sys := range systemDirs {
		if path == sys || strings.HasPrefix(path, sys+"/") {
			return true
		}
	}
	return false
}

// DefaultSkip returns the folder names a scan never enters: dependency,
// build output, cache and tool folders, whose contents carry markers of other
// people's projects. An entry with a slash skips a folder whose path ends
// with it. .git is never entered and is not listed.
func DefaultSkip() []string {
	return []string{
		// JavaScript
		"node_modules", "bower_components", ".npm", ".yarn", ".pnpm-store", ".next", ".nuxt", ".svelte-kit", ".turbo", ".parcel-cache",
		// Python
		".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages", ".eggs",
		// JVM
		"target", ".gradle", ".m2",
		// Go, PHP, Ruby
		"vendor", "pkg/mod",
		// Rust, toolchains and version managers
		".cargo", ".rustup", ".nvm", ".pyenv", ".rbenv", ".sdkman",
		// Elixir, Haskell, Dart, Swift, Terraform
		"_build", "deps", ".stack-work", ".dart_tool", ".build", "Pods", "DerivedData", ".terraform",
		// generic build output and caches
		"dist", "build", "out", ".cache", ".Trash", ".local/share/Trash",
	}
}

// DefaultSearchFolders returns the usual project folders below home that
// exist (~/src, ~/code, ~/projects, ~/dev, ~/work, ~/repos, ~/git, ~/go/src,
// ~/workspace, ~/Documents), followed by home itself, which Scan reads only
// HomeDepth levels deep.
func DefaultSearchFolders(home string) []string {
	if home == "" {
		return nil
	}
	var out []string
	for _, rel := range []string{"src", "code", "projects", "dev", "work", "repos", "git", "go/src", "workspace", "Documents"} {
		p := filepath.Join(home, filepath.FromSlash(rel))
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	return append(out, filepath.Clean(home))
}

// Scan walks the search folders of req and calls found for every
// repository and project, and progress at most every ProgressInterval plus
// once at the end. Both may be called from several goroutines at once, but
// never after Scan returns.
//
// A folder is reported as a repository when it holds a .git folder or
// "gitdir:" file, or is a bare repository itself; as a project when it holds
// a marker file (go.mod, package.json, ...). The walk keeps going below a
// repository (monorepos, nested repositories) but never into .git, into a
// folder named in the skip list, through a symbolic link, onto another file
// system or into /proc, /sys or /dev.
//
// Scan returns an error only for a search folder that does not exist or
// cannot be read (a *RootError naming it; nothing is scanned then), or for
// cancellation (ctx.Err()). Other folders that cannot be read are listed in
// Summary.Unreadable. With no Dirs, the DefaultSearchFolders of the home
// folder are scanned, and those that cannot be read go to Unreadable too.
func (s *Scanner) Scan(ctx context.Context, req Request, found func(Candidate), progress func(Progress)) (Summary, error) {
	if found == nil {
		found = func(Candidate) {}
	}
	if progress == nil {
		progress = func(Progress) {}
	}
	if err := ctx.Err(); err != nil {
		return Summary{}, err
	}
	roots, unreadable, err := s.roots(req)
	if err != nil {
		return Summary{}, err
	}
	skip := append(DefaultSkip(), req.Skip...)
	start := time.Now()
	cached := s.Cache != nil && s.Cache.use(skip, s.CrossFilesystems)
	if cached {
		s.Cache.rootsFor(roots)
	}
	w := newWalk(found, skip, roots, s.CrossFilesystems)
	w.unreadable = unreadable
	w.jsonc = s.JSONC
	if cached {
		w.trustBefore = s.Cache.trustBefore(start)
		defer func() { s.Cache.done(w.reused.Load(), w.read.Load(), w.read.Load() > 0 || w.forgot.Load()) }()
	}
	workers := s.Workers
	if workers <= 0 {
		workers = 4 * runtime.NumCPU()
	}
	w.run(ctx, workers, progress)

	sum := Summary{Visited: int(w.visited.Load()), Found: int(w.nfound.Load()), Unreadable: w.unreadable}
	slices.Sort(sum.Unreadable)
	if w.stopped.Load() {
		return sum, ctx.Err()
	}
	return sum, nil
}

// roots checks the search folders of req (or picks the default ones) and
// returns them as the first jobs of the walk, each once. A default folder
// that cannot be read is returned in unreadable rather than as an error.
func (s *Scanner) roots(req Request) (roots []job, unreadable []string, err error) {
	home := s.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	dirs, defaults := req.Dirs, false
	if len(dirs) == 0 {
		dirs, defaults = DefaultSearchFolders(home), true
	}
	depth := req.Depth
	if depth <= 0 {
		depth = DefaultDepth
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		root, dev, err := checkRoot(d)
		if err != nil {
			if defaults {
				unreadable = append(unreadable, d)
				continue
			}
			return nil, nil, err
		}
		if seen[root] {
			continue
		}
		seen[root] = true
		left := depth
		if root == home && req.Depth <= 0 {
			left = HomeDepth
		}
		roots = append(roots, job{path: root, repo: enclosingRepo(root), left: left, dev: dev,
			endMark: !s.CrossFilesystems && hasEndMark(root)})
	}
	return roots, unreadable, nil
}

// checkRoot makes a search folder absolute with symbolic links resolved and
// checks that it is a folder that can be read.
func checkRoot(dir string) (string, uint64, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", 0, &RootError{Path: dir, Err: err}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", 0, &RootError{Path: abs, Err: err}
	}
	if inSystemDir(real) {
		return "", 0, &RootError{Path: abs, Err: errSystemDir}
	}
	f, err := os.Open(real)
	if err != nil {
		return "", 0, &RootError{Path: abs, Err: err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", 0, &RootError{Path: abs, Err: err}
	}
	if !fi.IsDir() {
		return "", 0, &RootError{Path: abs, Err: errNotDir}
	}
	if _, err := f.ReadDir(1); err != nil && !errors.Is(err, io.EOF) {
		return "", 0, &RootError{Path: abs, Err: err}
	}
	dev, _ := deviceOf(fi)
	return real, dev, nil
}
