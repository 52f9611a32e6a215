package detect

import (
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Cache lets a re-scan skip the folders that have not changed since the
// last scan. Give the same Cache to Scanner.Cache for every scan; it
// remembers, for each folder read, its inode number, modification and change
// times, and what in it matters to a scan: the sub-folders to enter, the
// marker files, .git and the signs of a bare repository (never the other
// files). A folder whose stat still matches is not read again: one stat
// instead of an open, a read of the folder and a close.
//
// What a folder holds is trusted only while its stat is unchanged, and never
// when it changed in the 2 seconds before the scan that read it (a file
// system's clock ticks coarsely: a folder changed twice within one tick
// keeps its time; git's "racy clean" rule). Git metadata (branch, remote)
// and .code-workspace files are read again every time, since they change
// without their folder changing.
//
// One scan at a time uses a Cache; a scan started while another one holds
// it runs without it. Results never depend on the cache, only the time a
// scan takes. On systems other than Linux the cache is never trusted.
type Cache struct {
	mu    sync.Mutex
	key   string            // the options the listings depend on (the skip list)
	roots map[string]*cnode // search folder → what was read of it
	stats CacheStats

	window time.Duration // racyWindow; tests shorten it

	// file is where the cache was last loaded from or saved to; dirty says
	// it changed since.
	file  string
	dirty bool
}

// CacheStats says what the last scan with a Cache did with it, and what it
// holds.
type CacheStats struct {
	Reused  int // folders of the last scan taken from the cache, not read
	Read    int // folders of the last scan read (new, changed or untrusted)
	Folders int // folders the cache holds
	Bytes   int // about what it holds in memory
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{roots: map[string]*cnode{}} }

// Stats reports the last scan's use of c and c's size. It waits for a scan
// using c to end.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stats
	st.Folders, st.Bytes = 0, 0
	for p, n := range c.roots {
		f, b := n.size()
		st.Folders += f
		st.Bytes += b + len(p) + int(unsafe.Sizeof(*n))
	}
	return st
}

// stamp is what says a folder has not changed: its inode number and its
// modification and change times (ns). Creating, removing or renaming an
// entry changes both times; a chmod changes the change time. The zero stamp
// is never trusted.
type stamp struct {
	ino          uint64
	mtime, ctime int64
}

// cnode is one folder in the cache; kids are its sub-folders to enter, in
// the order they were read, their names sliced from one string.
type cnode struct {
	name string
	st   stamp // zero: not read, or read too soon after a change to trust
	kids []cnode
	more *cmore // nil for most folders
}

// cmore is what few folders hold: markers, .git, a bare repository's signs.
type cmore struct {
	markers []string
	wspaces []string
	dotGit  entryType
	gitLink bool // .git is a symbolic link: its target's type is looked up each time
	head    bool
	objects bool
	refs    bool
}

// trusted says whether what n holds may stand for the folder whose stat is
// now.
func (n *cnode) trusted(now stamp) bool {
	return n.st != stamp{} && n.st == now
}

// size returns the folders below and including n and about their bytes.
func (n *cnode) size() (folders, bytes int) {
	folders, bytes = 1, 0
	if n.more != nil {
		bytes += int(unsafe.Sizeof(*n.more)) + 16*(len(n.more.markers)+len(n.more.wspaces))
		for _, m := range n.more.markers {
			if _, interned := markerNames[m]; !interned {
				bytes += len(m)
			}
		}
	}
	bytes += cap(n.kids) * int(unsafe.Sizeof(cnode{}))
	for i := range n.kids {
		k := &n.kids[i]
		bytes += len(k.name) // the names share one string per folder
		f, b := k.size()
		folders += f
		bytes += b
	}
	return folders, bytes
}

// use takes c for a scan with the given skip list and cross-file-system
// setting, or returns false when another scan holds it. The caller calls
// done when the scan is over.
func (c *Cache) use(skip []string, cross bool) bool {
	if !c.mu.TryLock() {
		return false
	}
	key := strings.Join(skip, "\x00")
	if cross {
		key += "\x00\x01cross"
	}
	if c.roots == nil || key != c.key {
		c.roots = map[string]*cnode{}
		c.key = key
		c.dirty = true
	}
	c.stats = CacheStats{}
	return true
}

// rootsFor returns the node of each search folder, and forgets those no
// longer searched.
func (c *Cache) rootsFor(roots []job) {
	kept := make(map[string]*cnode, len(roots))
	for i := range roots {
		n := c.roots[roots[i].path]
		if n == nil {
			n = &cnode{}
			c.dirty = true
		}
		kept[roots[i].path] = n
		roots[i].node = n
	}
	if len(kept) != len(c.roots) {
		c.dirty = true
	}
	c.roots = kept
}

// done ends a scan's use of c; changed says the scan wrote to the cache.
func (c *Cache) done(reused, read int64, changed bool) {
	c.stats.Reused, c.stats.Read = int(reused), int(read)
	if changed {
		c.dirty = true
	}
	c.mu.Unlock()
}

// racyWindow is how long after a change a folder's listing is not trusted.
const racyWindow = 2 * time.Second

// trustBefore is the time (ns since 1970) after which a folder changed too
// recently, for a scan started at start, to trust what it holds later.
func (c *Cache) trustBefore(start time.Time) int64 {
	w := c.window
	if w == 0 {
		w = racyWindow
	}
	return start.Add(-w).UnixNano()
}

// fromCache fills sc with what n holds.
func (sc *scratch) fromCache(n *cnode) {
	sc.reset()
	for i := range n.kids {
		sc.names = append(sc.names, n.kids[i].name...)
		sc.ends = append(sc.ends, len(sc.names))
	}
	if m := n.more; m != nil {
		sc.markers = append(sc.markers, m.markers...)
		sc.wspaces = append(sc.wspaces, m.wspaces...)
		sc.dotGit, sc.head, sc.objects, sc.refs = m.dotGit, m.head, m.objects, m.refs
		sc.gitLink = m.gitLink
	}
}

// record makes n hold what sc read of a folder whose stat was st (zero when
// it is not to be trusted), keeping what n knew of sub-folders still there.
func (n *cnode) record(st stamp, sc *scratch) {
	n.st = st
	n.more = nil
	if len(sc.markers) > 0 || sc.dotGit != typeUnknown || sc.head || sc.objects || sc.refs {
		n.more = &cmore{markers: slices.Clone(sc.markers), wspaces: slices.Clone(sc.wspaces),
			dotGit: sc.dotGit, gitLink: sc.gitLink, head: sc.head, objects: sc.objects, refs: sc.refs}
	}
	if len(sc.ends) == 0 {
		n.kids = nil
		return
	}
	old := n.kids
	var byName map[string]int
	if len(old) > 16 {
		byName = make(map[string]int, len(old))
		for i := range old {
			byName[old[i].name] = i
		}
	}
	all := string(sc.names)
	kids := make([]cnode, len(sc.ends))
	start := 0
	for i, end := range sc.ends {
		name := all[start:end]
		start = end
		at := -1
		switch {
		case byName != nil:
			if k, ok := byName[name]; ok {
				at = k
			}
		case i < len(old) && old[i].name == name: // unchanged order
			at = i
		default:
			for k := range old {
				if old[k].name == name {
					at = k
					break
				}
			}
		}
		if at >= 0 {
			kids[i] = old[at]
		}
		kids[i].name = name
	}
	n.kids = kids
}

// pathOpenKids is how many sub-folders a cached folder needs for the walk to
// open it (O_PATH, reading nothing) and stat them relative to it rather than
// by their whole path: an open and a close cost about as much as walking a
// dozen path components for a few sub-folders.
var pathOpenKids = 4
