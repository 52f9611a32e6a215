package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"rootkeeper/app"
)

// NoticeTopic is the topic of the notice that says folders are being polled
// because they could not be watched.
const NoticeTopic = "watch"

// Defaults of Options.
const (
	DefaultPollInterval = 2 * time.Second
	DefaultDebounce     = 100 * time.Millisecond
	DefaultClockJump    = 5 * time.Second
	// DefaultCheckTimeout bounds one access check: a folder on a dead
	// network mount, or a FIFO where .git/HEAD should be, must not hold a
	// worker forever while the folder keeps its last health.
	DefaultCheckTimeout = 5 * time.Second
)

const (
	// workers bounds the checks that run at once: each opens the folder, and
	// a re-check of a thousand roots must not run out of descriptors.
	workers = 8
	// maxCandidates bounds the recent creations remembered as possible new
	// names of a renamed root.
	maxCandidates = 64
	// defaultSweep is how often every root is checked regardless of events:
	// a safety net for what no watch sees (a folder above the parent made
	// unreadable, an unmount the kernel did not announce).
	defaultSweep = time.Minute
	// stopWait is how long Run waits for checks in flight when it returns; a
	// check stuck on a dead network mount is abandoned after that.
	stopWait = 2 * time.Second
)

// Options configure a Monitor. The zero value is ready to use.
type Options struct {
	// Watcher reports file-system events. Nil means a new fsnotify watcher.
	// Run closes it when it returns.
	Watcher Watcher
	// PollInterval is how often roots that could not be watched are checked.
	// Zero means DefaultPollInterval.
	PollInterval time.Duration
	// Debounce collects a burst of events into one check per root. Zero
	// means DefaultDebounce.
	Debounce time.Duration
	// ClockJump is how far the wall clock may move apart from the monotonic
	// clock before the monitor concludes the machine slept (or the clock was
	// set) and re-checks every root. Zero means DefaultClockJump.
	ClockJump time.Duration
	// CheckTimeout bounds one access check; a check that takes longer counts
	// as unreadable (the folder is withdrawn), never as ok. Zero means
	// DefaultCheckTimeout.
	CheckTimeout time.Duration
	// Logger receives what the monitor notices. Nil discards.
	Logger *slog.Logger
}

// Monitor checks the enabled roots of a Core and publishes their health.
// Create it with NewMonitor and start it with Run.
type Monitor struct {
	core *app.Core
	opts Options
	log  *slog.Logger

	// Test hooks, set before Run.
	onCheck func(path string) // called by a worker before each check
	wall    func() time.Time  // the wall clock compared against monotonic time
	tick    time.Duration     // how often the clocks are compared
	sweep   time.Duration     // how often every root is checked anyway

	mu     sync.Mutex
	asked  map[string]bool // paths CheckNow asked for
	askedC chan struct{}
	// stuck holds the roots whose check overran CheckTimeout and has not
	// returned yet: they are not checked again (another goroutine would
	// only block beside the first) and stay unreadable until it returns.
	stuck map[string]bool
}

// NewMonitor returns a monitor of core's roots.
func NewMonitor(core *app.Core, opts Options) *Monitor {
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.ClockJump <= 0 {
		opts.ClockJump = DefaultClockJump
	}
	if opts.CheckTimeout <= 0 {
		opts.CheckTimeout = DefaultCheckTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Monitor{
		core:   core,
		opts:   opts,
		log:    log,
		wall:   time.Now,
		tick:   time.Second,
		sweep:  defaultSweep,
		asked:  map[string]bool{},
		askedC: make(chan struct{}, 1),
		stuck:  map[string]bool{},
	}
}

// CheckNow asks for the enabled root at path to be checked right away (the
// GUI's "check again"). It never blocks; the result arrives as a health
// change. Paths that are not enabled roots are ignored: a disabled root is
// checked when it is enabled.
func (m *Monitor) CheckNow(path string) {
	m.mu.Lock()
	m.asked[path] = true
	m.mu.Unlock()
	select {
	case m.askedC <- struct{}{}:
	default:
	}
}

func (m *Monitor) takeAsked() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	paths := make([]string, 0, len(m.asked))
	for p := range m.asked {
		paths = append(paths, p)
	}
	clear(m.asked)
	return paths
}

// Run checks every enabled root, then watches them and re-checks them as
// they change, until ctx ends. It follows the state: roots that are enabled
// or added are checked at once (and cannot be visible before that check, as
// they have no health yet); roots that are disabled or removed stop being
// watched and their health is reset to unknown, so that enabling one again
// cannot expose it on the strength of an old check. Run never blocks the
// core: checks run on their own goroutines. It returns nil when ctx ends, or
// an error if the file watcher stops on its own; the owner may call Run again
// (with a fresh Options.Watcher, if it injected one).
func (m *Monitor) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, werr := m.opts.Watcher, error(nil)
	if w == nil {
		w, werr = newFSWatcher()
		if werr != nil {
			m.log.Warn("cannot watch folders; polling instead", "err", werr)
			w = nil
		}
	}
	l := &loop{
		m:       m,
		core:    m.core,
		w:       w,
		wErr:    werr,
		roots:   map[string]*rootState{},
		dirs:    map[string]*dirWatch{},
		dirty:   map[*rootState]bool{},
		polled:  map[*rootState]bool{},
		jobs:    make(chan job),
		results: make(chan result),
		done:    make(chan struct{}),
	}
	defer l.stop()
	return l.run(ctx)
}

// rootState is what the loop knows about one enabled root.
type rootState struct {
	root   app.Root
	parent string
	gitDir string   // the repository's git directory, when it is one
	dirs   []string // the folders watched for this root

	polled  bool // checked every PollInterval: it cannot be (fully) watched
	limited bool // polled because a watch or instance limit was hit

	queued   bool // waiting for a worker
	inflight bool // being checked
	again    bool // something changed while it was being checked

	id        fileID // identity at the last ok check, to recognise a rename
	hasID     bool
	movedTo   string    // where it was last seen moved to
	renamedAt time.Time // when a rename of its path was last seen
}

// dirWatch is one watched folder, shared by the roots that need it.
type dirWatch struct {
	users map[*rootState]bool
	ok    bool // the watch is in place (fsnotify drops it when the folder goes)
}

type job struct {
	rs         *rootState
	path       string
	device     uint64
	id         fileID
	hasID      bool
	candidates []string // possible new names, for a root that was renamed
}

type result struct {
	rs     *rootState
	health app.Health
	id     fileID
	hasID  bool
	gitDir string
}

type created struct {
	path string
	at   time.Time
}

// loop is the state of one Run, owned by its goroutine.
type loop struct {
	m    *Monitor
	core *app.Core
	w    Watcher // nil: nothing can be watched, everything is polled
	wErr error   // why w is nil

	roots    map[string]*rootState
	sorted   []string // the keys of roots, sorted, to find roots below a folder
	synced   bool     // sync has run once
	stateGen uint64   // the state generation of the last snapshot synced
	dirs     map[string]*dirWatch

	dirty      map[*rootState]bool
	debounce   *time.Timer
	debounceC  <-chan time.Time
	creates    []created // recent creations, candidates for a renamed root's new name
	lastRename time.Time

	polled   map[*rootState]bool
	limitedN int
	notice   string

	queue   []*rootState
	head    *job // the next job, ready to hand to a worker
	jobs    chan job
	results chan result
	done    chan struct{}
	wg      sync.WaitGroup
}

func (l *loop) run(ctx context.Context) error {
	for range workers {
		l.wg.Add(1)
		go l.worker()
	}
	sub, unsub := l.core.Subscribe()
	defer unsub()
	mounts := make(chan struct{}, 1)
	go func() {
		// Its end is told, not silent: unmounts are then noticed by the
		// periodic checks only.
		if err := watchMounts(ctx, mounts); err != nil && ctx.Err() == nil {
			l.m.log.Warn("cannot follow mount changes; an unmounted drive is noticed by the periodic checks only", "err", err)
		}
	}()
	poll := time.NewTicker(l.m.opts.PollInterval)
	defer poll.Stop()
	clock := time.NewTicker(l.m.tick)
	defer clock.Stop()
	sweep := time.NewTicker(l.m.sweep)
	defer sweep.Stop()
	lastWall, lastMono := l.m.wall().Round(0), time.Now()
	l.debounce = time.NewTimer(time.Hour)
	l.debounce.Stop()

	var events <-chan fsnotify.Event
	var errs <-chan error
	if l.w != nil {
		events, errs = l.w.Events(), l.w.Errors()
	}
	l.sync(l.core.Snapshot())
	for {
		l.updateNotice()
		var jobs chan<- job
		var next job
		if l.fillHead() {
			jobs, next = l.jobs, *l.head
		}
		select {
		case <-ctx.Done():
			return nil
		case jobs <- next:
			l.head = nil
		case res := <-l.results:
			l.finish(res)
		case <-sub:
			l.sync(l.core.Snapshot())
		case <-l.m.askedC:
			for _, p := range l.m.takeAsked() {
				if rs := l.roots[p]; rs != nil {
					l.enqueue(rs)
				}
			}
		case ev, ok := <-events:
			if !ok {
				return errors.New("health: the file watcher stopped")
			}
			l.event(ev)
		case err, ok := <-errs:
			if !ok {
				return errors.New("health: the file watcher stopped")
			}
			// An overflow lost events; any other error may have too.
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				l.m.log.Info("file events were lost; re-checking every root")
			} else {
				l.m.log.Warn("file watcher error; re-checking every root", "err", err)
			}
			l.markAll()
		case <-l.debounceC:
			l.debounceC = nil
			for rs := range l.dirty {
				l.enqueue(rs)
			}
			clear(l.dirty)
		case <-poll.C:
			for rs := range l.polled {
				l.enqueue(rs)
			}
		case <-clock.C:
			wall, mono := l.m.wall().Round(0), time.Now()
			drift := wall.Sub(lastWall) - mono.Sub(lastMono)
			if drift < 0 {
				drift = -drift
			}
			if drift > l.m.opts.ClockJump {
				l.m.log.Info("the wall clock jumped (the machine slept?); re-checking every root", "jump", drift)
				for _, rs := range l.roots {
					l.enqueue(rs)
				}
			}
			lastWall, lastMono = wall, mono
		case <-sweep.C:
			for _, rs := range l.roots {
				l.enqueue(rs)
			}
		case <-mounts:
			l.m.log.Debug("the mount table changed; re-checking every root")
			l.markAll()
		}
	}
}

// stop ends the workers and closes the watcher.
func (l *loop) stop() {
	close(l.done)
	close(l.jobs)
	finished := make(chan struct{})
	go func() { l.wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(stopWait):
		l.m.log.Warn("a folder check is stuck (a dead network mount?); leaving it behind")
	}
	if l.w != nil {
		l.w.Close()
	}
}

func (l *loop) worker() {
	defer l.wg.Done()
	for j := range l.jobs {
		res := l.m.checkWithin(j)
		select {
		case l.results <- res:
		case <-l.done:
			return
		}
	}
}

// checkWithin is check bounded by CheckTimeout: a check that overruns is
// reported unreadable and left behind, and the worker moves on. Until the
// stuck check returns, that root is reported unreadable at once.
func (m *Monitor) checkWithin(j job) result {
	timeout := m.opts.CheckTimeout
	late := func() result { return result{rs: j.rs, health: app.TimedOut(j.path, timeout)} }
	m.mu.Lock()
	stuck := m.stuck[j.path]
	m.mu.Unlock()
	if stuck {
		return late()
	}
	return app.WithDeadline(timeout, func() result {
		res := m.check(j)
		m.mu.Lock()
		delete(m.stuck, j.path)
		m.mu.Unlock()
		return res
	}, func() result {
		m.mu.Lock()
		m.stuck[j.path] = true
		m.mu.Unlock()
		m.log.Warn("a folder's access check is stuck; withdrawing it", "path", j.path, "after", timeout)
		return late()
	})
}

// check runs the access check of one root, and finds its branch or, when it
// is gone, whether it was renamed to one of the candidates.
func (m *Monitor) check(j job) result {
	if m.onCheck != nil {
		m.onCheck(j.path)
	}
	res := result{rs: j.rs}
	h := app.CheckAccess(j.path, j.device)
	switch h.Status {
	case app.HealthOK:
		res.id, res.hasID = idOf(j.path)
		res.gitDir, h.Branch = gitInfo(j.path)
	case app.HealthMissing:
		if !j.hasID {
			break
		}
		for _, c := range j.candidates {
			if id, ok := idOf(c); ok && id == j.id && c != j.path {
				h.Status, h.MovedTo = app.HealthMoved, c
				break
			}
		}
	}
	res.health = h
	return res
}

// sync follows the state: it starts watching and checks roots that became
// enabled, and stops watching roots that did not stay so.
func (l *loop) sync(snap *app.Snapshot) {
	if l.synced && snap.StateGen == l.stateGen {
		return // a health, notice or server change: the roots are the same
	}
	l.synced, l.stateGen = true, snap.StateGen
	roots := snap.State.Roots
	want := make(map[string]app.Root, len(roots))
	for _, r := range roots {
		if r.Enabled {
			want[r.Path] = r
		}
	}
	changed := false
	for path, rs := range l.roots {
		if _, ok := want[path]; !ok {
			l.drop(rs, snap.Health[path])
			changed = true
		}
	}
	for path, r := range want {
		rs := l.roots[path]
		if rs == nil {
			rs = &rootState{root: r, parent: filepath.Dir(path)}
			l.roots[path] = rs
			changed = true
			// Watch first, then check: a change between the two is seen.
			l.watch(rs)
			l.enqueue(rs)
			continue
		}
		device := rs.root.Device
		rs.root = r
		if r.Device != device {
			l.enqueue(rs)
		}
	}
	if changed {
		l.sorted = l.sorted[:0]
		for path := range l.roots {
			l.sorted = append(l.sorted, path)
		}
		sort.Strings(l.sorted)
	}
}

// drop stops watching a root that is no longer enabled. Its health becomes
// unknown: it is not watched any more, so the last check says nothing about
// the moment it is enabled again.
func (l *loop) drop(rs *rootState, last app.Health) {
	for _, d := range rs.dirs {
		l.unuse(rs, d)
	}
	rs.dirs = nil
	l.setPolled(rs, false, false)
	delete(l.dirty, rs)
	delete(l.roots, rs.root.Path)
	if last.Status != app.HealthUnknown {
		l.core.SetHealth(rs.root.Path, app.Health{Branch: last.Branch, Checked: last.Checked})
	}
}

// watch makes sure the folders rs needs are watched: its parent (which sees
// it deleted, renamed, re-created or chmodded), itself, and its git
// directory. A root whose parent cannot be watched is polled; so is one that
// hit a limit.
func (l *loop) watch(rs *rootState) {
	want := []string{rs.parent}
	if rs.root.Path != rs.parent {
		want = append(want, rs.root.Path)
	}
	if rs.gitDir != "" {
		want = append(want, rs.gitDir)
	}
	for _, d := range rs.dirs {
		if !slices.Contains(want, d) {
			l.unuse(rs, d)
		}
	}
	rs.dirs = want
	if l.w == nil {
		l.setPolled(rs, true, true)
		return
	}
	polled, limited := false, false
	for _, d := range want {
		dw := l.dirs[d]
		if dw == nil {
			dw = &dirWatch{users: map[*rootState]bool{}}
			l.dirs[d] = dw
		}
		dw.users[rs] = true
		if dw.ok {
			continue
		}
		err := l.w.Add(d)
		switch {
		case err == nil:
			dw.ok = true
		case isLimit(err):
			polled, limited = true, true
		case d == rs.parent:
			polled = true // nothing would see the root come back
		}
	}
	l.setPolled(rs, polled, limited)
}

func (l *loop) unuse(rs *rootState, d string) {
	dw := l.dirs[d]
	if dw == nil {
		return
	}
	delete(dw.users, rs)
	if len(dw.users) == 0 {
		if dw.ok && l.w != nil {
			l.w.Remove(d) // may already be gone with the folder
		}
		delete(l.dirs, d)
	}
}

func (l *loop) setPolled(rs *rootState, polled, limited bool) {
	if polled {
		l.polled[rs] = true
	} else {
		delete(l.polled, rs)
	}
	if limited != rs.limited {
		if limited {
			l.limitedN++
		} else {
			l.limitedN--
		}
	}
	rs.polled, rs.limited = polled, limited
}

// updateNotice says, once, that folders are polled because of a limit, and
// takes it back when they no longer are.
func (l *loop) updateNotice() {
	msg := ""
	switch {
	case l.w == nil && len(l.roots) > 0:
		msg = fmt.Sprintf("Folders cannot be watched (%v); checking them every %s instead.", l.wErr, l.m.opts.PollInterval)
	case l.limitedN > 0:
		msg = fmt.Sprintf("The system's limit on watched folders was reached (fs.inotify.max_user_watches or max_user_instances); some folders are checked every %s instead.", l.m.opts.PollInterval)
	}
	if msg == l.notice {
		return
	}
	if msg != "" {
		l.m.log.Warn(msg)
	}
	l.notice = msg
	l.core.SetNotice(NoticeTopic, msg)
}

// event turns one file-system event into the roots it may concern. Events
// that cannot change a root's health (a file created inside it, say) are
// dropped here, before any check.
func (l *loop) event(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	now := time.Now()
	// A watched folder itself changed: every root that needs it is checked,
	// and if it went, so did its watch.
	if dw := l.dirs[name]; dw != nil {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			dw.ok = false
		}
		for rs := range dw.users {
			l.mark(rs)
		}
	}
	// A root, or a folder above roots, was created, removed, renamed or
	// chmodded.
	if rs := l.roots[name]; rs != nil {
		l.mark(rs)
		if ev.Has(fsnotify.Rename) {
			rs.renamedAt, l.lastRename = now, now
		}
	}
	l.markBelow(name)
	dir, base := filepath.Dir(name), filepath.Base(name)
	switch base {
	case "HEAD": // a branch switch
		if dw := l.dirs[dir]; dw != nil {
			for rs := range dw.users {
				if rs.gitDir == dir {
					l.mark(rs)
				}
			}
		}
	case ".git": // a repository appeared or went
		if rs := l.roots[dir]; rs != nil {
			l.mark(rs)
		}
	}
	// Remember what was created right after a rename: fsnotify reports a
	// rename as a Rename of the old name and a Create of the new one.
	if ev.Has(fsnotify.Create) && l.roots[name] == nil && now.Sub(l.lastRename) < l.renameWindow() {
		if len(l.creates) == maxCandidates {
			l.creates = l.creates[1:]
		}
		l.creates = append(l.creates, created{name, now})
	}
}

// renameWindow is how long after a rename a creation counts as its new name.
func (l *loop) renameWindow() time.Duration { return 10*l.m.opts.Debounce + time.Second }

// markBelow marks the roots strictly inside dir.
func (l *loop) markBelow(dir string) {
	prefix := dir
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	for i := sort.SearchStrings(l.sorted, prefix); i < len(l.sorted) && strings.HasPrefix(l.sorted[i], prefix); i++ {
		l.mark(l.roots[l.sorted[i]])
	}
}

// mark schedules a check of rs at the end of the current debounce window.
// The window starts with the first event and is not extended by later ones,
// so a steady stream of events still gives a check every Debounce.
func (l *loop) mark(rs *rootState) {
	l.dirty[rs] = true
	if l.debounceC == nil {
		l.debounce.Reset(l.m.opts.Debounce)
		l.debounceC = l.debounce.C
	}
}

func (l *loop) markAll() {
	for _, rs := range l.roots {
		l.mark(rs)
	}
}

// enqueue schedules a check of rs now.
func (l *loop) enqueue(rs *rootState) {
	switch {
	case rs.inflight:
		rs.again = true
	case !rs.queued:
		rs.queued = true
		l.queue = append(l.queue, rs)
	}
}

// fillHead prepares the next job, if there is one.
func (l *loop) fillHead() bool {
	for l.head == nil && len(l.queue) > 0 {
		rs := l.queue[0]
		l.queue[0] = nil
		l.queue = l.queue[1:]
		rs.queued = false
		if l.roots[rs.root.Path] != rs {
			continue // dropped while it waited
		}
		rs.inflight = true
		j := job{rs: rs, path: rs.root.Path, device: rs.root.Device, id: rs.id, hasID: rs.hasID}
		if rs.movedTo != "" {
			j.candidates = append(j.candidates, rs.movedTo)
		}
		if !rs.renamedAt.IsZero() {
			for _, c := range l.creates {
				if c.at.Sub(rs.renamedAt).Abs() < l.renameWindow() {
					j.candidates = append(j.candidates, c.path)
				}
			}
		}
		l.head = &j
	}
	if len(l.queue) == 0 {
		l.queue = nil // let the backing array go
	}
	return l.head != nil
}

// finish publishes a check's result and adjusts the watches to it.
func (l *loop) finish(res result) {
	rs := res.rs
	if l.roots[rs.root.Path] != rs {
		return // dropped while it was checked
	}
	rs.inflight = false
	again := rs.again
	rs.again = false
	h := res.health
	switch h.Status {
	case app.HealthOK:
		rs.id, rs.hasID = res.id, res.hasID
		rs.gitDir = res.gitDir
		rs.movedTo, rs.renamedAt = "", time.Time{}
	default:
		rs.movedTo = h.MovedTo
	}
	// If something changed during the check, an ok may already be stale:
	// publish only bad news, and look again.
	if !again || !h.OK() {
		l.core.SetHealth(rs.root.Path, h)
	}
	l.watch(rs)
	if again {
		l.enqueue(rs)
	}
}
