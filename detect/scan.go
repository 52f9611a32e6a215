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
	"sync"
	"sync/atomic"
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

// Scan runs a Scanner with default options; see Scanner.Scan.
func Scan(ctx context.Context, req Request, found func(Candidate), progress func(Progress)) (Summary, error) {
	var s Scanner
	return s.Scan(ctx, req, found, progress)
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
	home := s.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home != "" {
		if h, err := filepath.EvalSymlinks(home); err == nil {
			home = h
		}
	}
	w := &walk{
		ctx:     ctx,
		found:   found,
		skip:    map[string]bool{},
		stops:   map[string]stop{},
		emitted: map[string]bool{},
	}
	w.cond = sync.Cond{L: &w.mu}
	for _, n := range append(DefaultSkip(), req.Skip...) {
		switch {
		case filepath.IsAbs(n):
			w.stops[filepath.Clean(n)] = stopAlways
		case strings.Contains(n, "/"):
			w.skipSuffix = append(w.skipSuffix, "/"+strings.Trim(n, "/"))
		case n != "":
			w.skip[n] = true
		}
	}
	for _, d := range systemDirs {
		w.stops[d] = stopAlways
	}

	dirs, defaults := req.Dirs, false
	if len(dirs) == 0 {
		dirs, defaults = DefaultSearchFolders(home), true
	}
	depth := req.Depth
	if depth <= 0 {
		depth = DefaultDepth
	}
	var roots []job
	seen := map[string]bool{}
	for _, d := range dirs {
		root, dev, err := checkRoot(d)
		if err != nil {
			if defaults {
				w.unreadable = append(w.unreadable, d)
				continue
			}
			return Summary{}, err
		}
		if seen[root] {
			continue
		}
		seen[root] = true
		left := depth
		if root == home && req.Depth <= 0 {
			left = HomeDepth
		}
		roots = append(roots, job{path: root, repo: enclosingRepo(root), left: left, dev: dev})
	}
	// A search folder inside another one is walked on its own, once.
	for _, r := range roots {
		w.stops[r.path] = stopRoot
	}
	if !s.CrossFilesystems {
		w.mounts, w.knowMounts = mountPoints()
	}

	workers := s.Workers
	if workers <= 0 {
		workers = 4 * runtime.NumCPU()
	}
	slices.Reverse(roots) // the stack pops the first search folder first
	w.stack = roots
	w.cross = s.CrossFilesystems

	// Cancellation sets a flag the workers check between folders.
	finished := make(chan struct{})
	var aux sync.WaitGroup
	aux.Add(2)
	go func() {
		defer aux.Done()
		select {
		case <-ctx.Done():
			w.stopped.Store(true)
		case <-finished:
		}
	}()
	go func() {
		defer aux.Done()
		t := time.NewTicker(ProgressInterval)
		defer t.Stop()
		var last Progress
		for {
			select {
			case <-finished:
				return
			case <-t.C:
				if p := w.progress(); p != last {
					last = p
					progress(p)
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(w.work)
	}
	wg.Wait()
	close(finished)
	aux.Wait()
	progress(w.progress())

	sum := Summary{Visited: int(w.visited.Load()), Found: int(w.nfound.Load()), Unreadable: w.unreadable}
	slices.Sort(sum.Unreadable)
	if w.stopped.Load() {
		return sum, ctx.Err()
	}
	return sum, nil
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
	for _, sys := range systemDirs {
		if real == sys || strings.HasPrefix(real, sys+"/") {
			return "", 0, &RootError{Path: abs, Err: errSystemDir}
		}
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

type entryType uint8

const (
	typeUnknown entryType = iota
	typeDir
	typeFile
	typeSymlink
	typeOther
)

// stop says why the walk must look at a path before entering it.
type stop uint8

const (
	stopAlways stop = iota + 1 // a system folder or a skipped path
	stopRoot                   // another search folder, walked on its own
)

// job is a folder waiting to be read.
type job struct {
	path    string
	parent  *dirRef // the open parent folder, or nil to open path from the root
	nameOff int     // path[nameOff:] is the folder's name in parent
	repo    string  // the nearest repository above path, if any
	left    int     // levels below path still to read
	dev     uint64  // the search folder's device
}

// walk is the state of one scan shared by its workers.
type walk struct {
	ctx        context.Context
	found      func(Candidate)
	skip       map[string]bool
	skipSuffix []string
	stops      map[string]stop
	mounts     map[string]uint64
	knowMounts bool
	cross      bool

	mu    sync.Mutex
	cond  sync.Cond
	stack []job // folders to read, last first: depth first keeps it short
	busy  int   // workers reading a folder
	idle  int   // workers waiting for one

	stopped atomic.Bool
	visited atomic.Int64
	nfound  atomic.Int64
	current atomic.Pointer[string]

	emu        sync.Mutex
	emitted    map[string]bool
	unreadable []string
}

func (w *walk) progress() Progress {
	p := Progress{Visited: int(w.visited.Load()), Found: int(w.nfound.Load())}
	if c := w.current.Load(); c != nil {
		p.Current = *c
	}
	return p
}

// work reads folders from the stack until there are none left and no
// worker is reading one (which could add more).
func (w *walk) work() {
	sc := &scratch{buf: make([]byte, 32<<10)}
	var kids []job
	reading := false
	for {
		w.mu.Lock()
		if reading {
			w.busy--
			w.stack = append(w.stack, kids...)
			// This worker takes one of its kids itself; wake others for the rest.
			for i := 1; i < len(kids) && i <= w.idle; i++ {
				w.cond.Signal()
			}
		}
		if w.stopped.Load() {
			for _, j := range w.stack {
				j.parent.release()
			}
			w.stack = w.stack[:0]
		}
		for len(w.stack) == 0 && w.busy > 0 {
			w.idle++
			w.cond.Wait()
			w.idle--
		}
		if len(w.stack) == 0 {
			w.cond.Broadcast() // done: wake the others to leave too
			w.mu.Unlock()
			return
		}
		j := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.busy++
		w.mu.Unlock()

		reading = true
		kids = w.visit(j, sc, kids[:0])
	}
}

// scratch is a worker's reusable memory for reading one folder.
type scratch struct {
	buf     []byte
	names   []string // sub-folders to enter
	markers []string
	wspaces []string
	dotGit  entryType
	head    bool // HEAD, objects and refs: a bare repository
	objects bool
	refs    bool
}

func (sc *scratch) reset() {
	sc.names, sc.markers, sc.wspaces = sc.names[:0], sc.markers[:0], sc.wspaces[:0]
	sc.dotGit, sc.head, sc.objects, sc.refs = typeUnknown, false, false, false
}

// add takes note of one entry of the folder being read: sub-folders to
// enter (unless named in skip), markers, and what makes a repository.
func (sc *scratch) add(name []byte, t entryType, skip map[string]bool) {
	switch t {
	case typeDir:
		switch string(name) {
		case ".git":
			sc.dotGit = typeDir
			return
		case "objects":
			sc.objects = true
		case "refs":
			sc.refs = true
		}
		if m := dirMarker(name); m != "" {
			sc.markers = append(sc.markers, m)
			return
		}
		if !skip[string(name)] {
			sc.names = append(sc.names, string(name))
		}
	case typeFile:
		switch string(name) {
		case ".git":
			sc.dotGit = typeFile
			return
		case "HEAD":
			sc.head = true
		}
		fallthrough
	case typeSymlink:
		if m := fileMarker(name); m != "" {
			sc.markers = append(sc.markers, m)
			if strings.HasSuffix(m, workspaceSuffix) {
				sc.wspaces = append(sc.wspaces, m)
			}
		}
	}
}

// visit reads the folder of j, reports what it is, and returns the
// sub-folders to read next appended to kids.
func (w *walk) visit(j job, sc *scratch, kids []job) []job {
	if w.stopped.Load() {
		j.parent.release()
		return kids
	}
	d, err := openDir(j.parent, j.path, j.nameOff)
	j.parent.release()
	if err != nil {
		w.unreadableErr(j.path, err)
		return kids
	}
	current := j.path
	w.current.Store(&current)
	sc.reset()
	dev, err := d.list(sc.buf, func(name []byte, t entryType) {
		if t == typeSymlink && string(name) == ".git" {
			t = statType(j.path + "/.git")
		}
		sc.add(name, t, w.skip)
	})
	if err != nil {
		d.close()
		w.unreadableErr(j.path, err)
		return kids
	}
	if dev != 0 && j.dev != 0 && dev != j.dev && !w.cross {
		d.close()
		return kids // another file system, noticed after opening it (not Linux)
	}
	w.visited.Add(1)

	repo := j.repo
	if sc.dotGit == typeUnknown && sc.head && sc.objects && sc.refs {
		if info, ok := readBare(j.path); ok {
			w.emit(Candidate{Path: j.path, Kind: KindRepo, Branch: info.branch, Remote: info.remote, Repo: j.repo, Bare: true})
			d.close()
			return kids // a git directory: nothing of the person's inside
		}
	}
	if c, ok := w.classify(j.path, j.repo, sc); ok {
		w.emit(c)
		if c.Kind == KindRepo {
			repo = j.path
		}
	}
	for _, ws := range sc.wspaces {
		for _, f := range workspaceFolders(filepath.Join(j.path, ws)) {
			w.workspaceFolder(f, ws, sc)
		}
	}
	if j.left > 0 && !w.stopped.Load() {
		first := len(kids)
		for _, n := range sc.names {
			p := j.path + "/" + n
			if j.path == "/" {
				p = "/" + n
			}
			if !w.skipped(p, j.dev) {
				kids = append(kids, job{path: p, nameOff: len(p) - len(n), repo: repo, left: j.left - 1, dev: j.dev})
			}
		}
		ref := d.share(len(kids) - first)
		for i := first; i < len(kids); i++ {
			kids[i].parent = ref
		}
		return kids
	}
	d.close()
	return kids
}

// unreadableErr records that the folder at path could not be read, unless
// it merely vanished or stopped being a folder since its parent was read.
func (w *walk) unreadableErr(path string, err error) {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) || isNotDirOrLoop(err) {
		return
	}
	w.emu.Lock()
	w.unreadable = append(w.unreadable, path)
	w.emu.Unlock()
}

// classify turns what was read of a folder into a candidate, if it is one.
func (w *walk) classify(dir, enclosing string, sc *scratch) (Candidate, bool) {
	var markers []string
	if len(sc.markers) > 0 {
		markers = slices.Clone(sc.markers)
		slices.Sort(markers)
	}
	if sc.dotGit != typeUnknown {
		if info, ok := readRepo(dir, sc.dotGit == typeDir, enclosing); ok {
			return Candidate{Path: dir, Kind: KindRepo, Markers: markers, Branch: info.branch, Remote: info.remote,
				Repo: enclosing, Worktree: info.worktree, Submodule: info.submodule}, true
		}
	}
	if markers != nil {
		return Candidate{Path: dir, Kind: KindProject, Markers: markers, Repo: enclosing}, true
	}
	return Candidate{}, false
}

// workspaceFolder reports a folder a .code-workspace file lists: as what it
// is if it is a repository or project itself (which the walk may report
// too: emit reports a path once), else as a project whose marker is the
// workspace file.
func (w *walk) workspaceFolder(dir, wsName string, outer *scratch) {
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil || w.isEmitted(dir) {
		return
	}
	d, err := openDir(nil, dir, 0)
	if err != nil {
		return
	}
	sc := &scratch{}
	_, err = d.list(outer.buf, func(name []byte, t entryType) {
		if t == typeSymlink && string(name) == ".git" {
			t = statType(dir + "/.git")
		}
		sc.add(name, t, nil)
	})
	d.close()
	if err != nil {
		return
	}
	enclosing := enclosingRepo(dir)
	c, ok := w.classify(dir, enclosing, sc)
	if !ok {
		c = Candidate{Path: dir, Kind: KindProject, Markers: []string{wsName}, Repo: enclosing}
	}
	w.emit(c)
}

// skipped says whether the walk must not enter the folder at path.
func (w *walk) skipped(path string, rootDev uint64) bool {
	for _, s := range w.skipSuffix {
		if strings.HasSuffix(path, s) {
			return true
		}
	}
	if len(w.stops) > 0 {
		if _, ok := w.stops[path]; ok {
			return true
		}
	}
	if w.knowMounts && rootDev != 0 {
		if dev, ok := w.mounts[path]; ok && dev != rootDev {
			return true
		}
	}
	return false
}

// emit reports c unless its path was reported already.
func (w *walk) emit(c Candidate) {
	w.emu.Lock()
	dup := w.emitted[c.Path]
	w.emitted[c.Path] = true
	w.emu.Unlock()
	if dup {
		return
	}
	w.nfound.Add(1)
	w.found(c)
}

func (w *walk) isEmitted(path string) bool {
	w.emu.Lock()
	defer w.emu.Unlock()
	return w.emitted[path]
}

// statType is the type of what path names, following symbolic links.
func statType(path string) entryType {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return typeUnknown
	case fi.IsDir():
		return typeDir
	case fi.Mode().IsRegular():
		return typeFile
	}
	return typeUnknown
}

func isDots(name []byte) bool {
	return len(name) == 1 && name[0] == '.' || len(name) == 2 && name[0] == '.' && name[1] == '.'
}
