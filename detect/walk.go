package detect

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type entryType uint8

const (
	typeUnknown entryType = iota
	typeDir
	typeFile
	typeSymlink
	typeOther
)

// job is a folder waiting to be read.
type job struct {
	path    string
	parent  *dirRef // the open parent folder, or nil to open path from the root
	nameOff int     // path[nameOff:] is the folder's name in parent
	repo    string  // the nearest repository above path, if any
	left    int     // levels below path still to read
	dev     uint64  // the search folder's device
	endMark bool    // the walk stays on a file system whose folders mark their end (ext4)
	node    *cnode  // what the re-scan cache holds of path, filled in by the visit; nil without a cache
}

const sep = string(filepath.Separator)

// walk is the state of one scan shared by its workers.
type walk struct {
	found      func(Candidate)
	skip       map[string]bool   // folder names not to enter
	skipSuffix []string          // "/a/b": folders whose path ends so are not entered
	fences     map[string]bool   // folders not to enter: skipped paths, system folders, other search folders
	mounts     map[string]uint64 // mount point → device, when knowMounts
	knowMounts bool
	cross      bool                         // enter other file systems
	jsonc      func([]byte) ([]byte, error) // Scanner.JSONC

	// With a re-scan cache: listings of folders changed after trustBefore
	// (ns since 1970) are not trusted; reused and read count folders.
	trustBefore int64
	reused      atomic.Int64
	read        atomic.Int64
	forgot      atomic.Bool // a folder the cache knew could not be read

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

func newWalk(found func(Candidate), skip []string, roots []job, cross bool) *walk {
	w := &walk{
		found:   found,
		skip:    map[string]bool{},
		fences:  map[string]bool{},
		emitted: map[string]bool{},
		cross:   cross,
	}
	w.cond.L = &w.mu
	for _, n := range skip {
		switch {
		case filepath.IsAbs(n):
			w.fences[filepath.Clean(n)] = true
		case strings.Contains(n, "/"):
			w.skipSuffix = append(w.skipSuffix, sep+filepath.FromSlash(strings.Trim(n, "/")))
		case n != "":
			w.skip[n] = true
		}
	}
	for _, d := range systemDirs {
		w.fences[d] = true
	}
	// A search folder inside another one is walked on its own, once.
	for _, r := range roots {
		w.fences[r.path] = true
	}
	if !cross {
		w.mounts, w.knowMounts = mountPoints()
	}
	w.stack = slices.Clone(roots)
	for i := range w.stack {
		// Only a walk known to stay on one file system may trust its marks.
		w.stack[i].endMark = w.stack[i].endMark && w.knowMounts
	}
	slices.Reverse(w.stack) // the stack pops the first search folder first
	return w
}

// run reads every folder with workers goroutines and returns when they are
// done, or soon after ctx is cancelled. progress is called every
// ProgressInterval while something changed, and once at the end.
func (w *walk) run(ctx context.Context, workers int, progress func(Progress)) {
	finished := make(chan struct{})
	var aux sync.WaitGroup
	aux.Go(func() {
		// Cancellation sets a flag the workers check between folders.
		select {
		case <-ctx.Done():
			w.stopped.Store(true)
		case <-finished:
		}
	})
	aux.Go(func() {
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
	})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(w.work)
	}
	wg.Wait()
	close(finished)
	aux.Wait()
	progress(w.progress())
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
	names   []byte // sub-folders to enter, one after the other
	ends    []int  // where each name in names ends
	visits  int
	markers []string
	wspaces []string
	dotGit  entryType
	gitLink bool // .git is a symbolic link
	head    bool // HEAD, objects and refs: a bare repository
	objects bool
	refs    bool
}

func (sc *scratch) reset() {
	sc.names, sc.ends, sc.markers, sc.wspaces = sc.names[:0], sc.ends[:0], sc.markers[:0], sc.wspaces[:0]
	sc.dotGit, sc.gitLink, sc.head, sc.objects, sc.refs = typeUnknown, false, false, false, false
}

// add takes note of one entry of the folder dir being read: sub-folders to
// enter (unless named in skip), markers, and what makes a repository.
func (sc *scratch) add(dir string, name []byte, t entryType, skip map[string]bool) {
	if t == typeSymlink && string(name) == ".git" {
		sc.gitLink = true
		t = statType(dir + sep + ".git")
	}
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
			sc.names = append(sc.names, name...)
			sc.ends = append(sc.ends, len(sc.names))
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

// visit reads the folder of j (or takes it from the re-scan cache when its
// stat says it has not changed), reports what it is, and returns the
// sub-folders to read next appended to kids.
func (w *walk) visit(j job, sc *scratch, kids []job) []job {
	if w.stopped.Load() {
		j.parent.release()
		return kids
	}
	if j.node != nil && j.node.st != (stamp{}) {
		if len(j.node.kids) >= pathOpenKids && j.left > 0 {
			// Its sub-folders will be stat'ed relative to it: cheaper than
			// by their whole path.
			if d, now, ok := openPath(j.parent, j.path, j.nameOff); ok {
				if j.node.trusted(now) {
					j.parent.release()
					return w.visitCached(j, sc, kids, d, true)
				}
				d.close()
			}
		} else if now, ok := statDir(j.parent, j.path, j.nameOff); ok && j.node.trusted(now) {
			// Its sub-folders are stat'ed relative to the nearest folder
			// above that is open, which j.parent is.
			return w.visitCached(j, sc, kids, dir{}, false)
		}
	}
	d, err := openDir(j.parent, j.path, j.nameOff)
	j.parent.release()
	if err != nil {
		if j.node != nil {
			j.node.st = stamp{}
			w.forgot.Store(true)
		}
		w.unreadableErr(j.path, err)
		return kids
	}
	w.showCurrent(j.path, sc)
	var st stamp
	if j.node != nil {
		// The stat is taken before the read: a change during the read
		// changes the stat the next scan compares.
		if now, ok := d.stamp(); ok && now.mtime < w.trustBefore && now.ctime < w.trustBefore {
			st = now
		}
	}
	sc.reset()
	dev, err := d.list(sc.buf, j.endMark, func(name []byte, t entryType) { sc.add(j.path, name, t, w.skip) })
	if err != nil {
		d.close()
		if j.node != nil {
			j.node.st = stamp{}
			w.forgot.Store(true)
		}
		w.unreadableErr(j.path, err)
		return kids
	}
	if dev != 0 && j.dev != 0 && dev != j.dev && !w.cross {
		d.close()
		return kids // another file system, noticed after opening it (not Linux)
	}
	if j.node != nil {
		j.node.record(st, sc)
		w.read.Add(1)
	}
	return w.decide(j, sc, kids, d, true)
}

// visitCached decides about the folder of j from what the re-scan cache
// holds of it, without reading it. opened says d is the folder, opened for
// its sub-folders; else j.parent is still held (see decide).
func (w *walk) visitCached(j job, sc *scratch, kids []job, d dir, opened bool) []job {
	w.showCurrent(j.path, sc)
	sc.fromCache(j.node)
	if sc.gitLink {
		// A link's target can change without its folder changing.
		sc.dotGit = typeUnknown
		if t := statType(j.path + sep + ".git"); t == typeDir || t == typeFile {
			sc.dotGit = t
		}
	}
	w.reused.Add(1)
	return w.decide(j, sc, kids, d, opened)
}

func (w *walk) showCurrent(path string, sc *scratch) {
	if sc.visits++; sc.visits%16 == 1 { // often enough for progress, cheaply
		current := path
		w.current.Store(&current)
	}
}

// decide reports what the folder of j is from what sc holds of it, and
// returns the sub-folders to read next appended to kids. opened says d is
// the folder, open, for the sub-folders to be opened relative to; decide
// closes it. Else the visit still holds j.parent (an open folder above, or
// nil), which the sub-folders are then opened relative to, by the rest of
// their path.
func (w *walk) decide(j job, sc *scratch, kids []job, d dir, opened bool) []job {
	closeDir := func() {
		if opened {
			d.close()
		} else {
			j.parent.release()
		}
	}
	w.visited.Add(1)

	repo := j.repo
	if sc.dotGit == typeUnknown && sc.head && sc.objects && sc.refs {
		if info, ok := readBare(j.path); ok {
			w.emit(Candidate{Path: j.path, Kind: KindRepo, Branch: info.branch, Remote: info.remote, Repo: j.repo, Bare: true})
			closeDir()
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
		for _, f := range workspaceFolders(filepath.Join(j.path, ws), w.jsonc) {
			w.workspaceFolder(f, ws, sc)
		}
	}
	if j.left > 0 && !w.stopped.Load() {
		first := len(kids)
		start := 0
		for i, end := range sc.ends {
			n := sc.names[start:end]
			start = end
			var p string
			if strings.HasSuffix(j.path, sep) { // "/" or `C:\`
				p = j.path + string(n)
			} else {
				p = j.path + sep + string(n)
			}
			if !w.skipped(p, j.dev) {
				k := job{path: p, nameOff: len(p) - len(n), repo: repo, left: j.left - 1, dev: j.dev, endMark: j.endMark}
				if j.node != nil {
					k.node = &j.node.kids[i]
				}
				kids = append(kids, k)
			}
		}
		switch n := len(kids) - first; {
		case opened:
			ref := d.share(n)
			for i := first; i < len(kids); i++ {
				kids[i].parent = ref
			}
		case j.parent != nil && n > 0:
			j.parent.hold(n - 1) // and the one of j goes to a sub-folder
			for i := first; i < len(kids); i++ {
				kids[i].parent, kids[i].nameOff = j.parent, j.nameOff
			}
		default:
			j.parent.release()
		}
		return kids
	}
	closeDir()
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
	if err != nil || inSystemDir(dir) || w.isEmitted(dir) {
		return
	}
	d, err := openDir(nil, dir, 0)
	if err != nil {
		return
	}
	sc := &scratch{}
	_, err = d.list(outer.buf, false, func(name []byte, t entryType) { sc.add(dir, name, t, nil) })
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
	if w.fences[path] {
		return true
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
