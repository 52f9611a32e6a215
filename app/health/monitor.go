package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	// clockTick is how often the wall clock is compared with the
	// monotonic clock.
	clockTick = time.Second
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
	onCheck   func(path string) // called by a worker before each check
	onChecked func(path string) // called by a worker after each check, before its result is told
	wall      func() time.Time  // the wall clock compared against monotonic time
	// mounts follows the mount table (watchMounts); a test in a synctest
	// bubble replaces it, as a goroutine blocked in poll(2) never settles.
	mounts func(ctx context.Context, changed chan<- struct{}) error

	mu     sync.Mutex
	asked  map[string][]chan<- answer // paths Check asked for, and who waits
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
		mounts: watchMounts,
		asked:  map[string][]chan<- answer{},
		askedC: make(chan struct{}, 1),
		stuck:  map[string]bool{},
	}
}

// ErrNotEnabled is Check's answer for a path that is not an enabled root:
// only those are checked (a disabled root is checked when it is enabled).
var ErrNotEnabled = errors.New("not an enabled folder")

// errStopped is Check's answer when the monitor stopped before the check
// was done.
var errStopped = errors.New("the health monitor stopped before the check was done")

// answer is the outcome of a check Check asked for.
type answer struct {
	health app.Health
	err    error
}

// Check checks the enabled root at path now (the window's "Check again",
// `rootkeeper roots check`) and returns its health once that check is done
// and published: a check begun before the call does not count, so a change
// made just before is seen. A check that does not finish within
// CheckTimeout counts as unreadable, as always. Check returns an error
// wrapping ErrNotEnabled for a path that is not an enabled root, and ctx's
// error if ctx ends first (Run is not running, say); the check is still
// done then.
func (m *Monitor) Check(ctx context.Context, path string) (app.Health, error) {
	ans := make(chan answer, 1)
	m.mu.Lock()
	m.asked[path] = append(m.asked[path], ans)
	m.mu.Unlock()
	select {
	case m.askedC <- struct{}{}:
	default:
	}
	select {
	case a := <-ans:
		return a.health, a.err
	case <-ctx.Done():
		return app.Health{}, ctx.Err()
	}
}

func (m *Monitor) takeAsked() map[string][]chan<- answer {
	m.mu.Lock()
	defer m.mu.Unlock()
	asked := m.asked
	m.asked = map[string][]chan<- answer{}
	return asked
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
	// waiting are the Check calls waiting for this root's next check to
	// be done.
	waiting []chan<- answer

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

// run is the loop's goroutine: it starts the workers, then waits for
// whatever calls for a check (a file event, a change of the state, a Check
// call, a tick of the poll, the sweep or the clock, a change of the mount
// table) and hands the roots to check to the workers, one job at a time.
func (l *loop) run(ctx context.Context) error {
	for range workers {
		l.wg.Add(1)
		go l.worker()
	}
	sub, unsub := l.core.Subscribe()
	defer unsub()
	mounts := l.followMounts(ctx)
	poll := time.NewTicker(l.m.opts.PollInterval)
	defer poll.Stop()
	clock := time.NewTicker(clockTick)
	defer clock.Stop()
	sweep := time.NewTicker(defaultSweep)
	defer sweep.Stop()
	jumps := wallClock{wall: l.m.wall().Round(0), mono: time.Now()}
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
			l.queueAsked()
		case ev, ok := <-events:
			if !ok {
				return errors.New("health: the file watcher stopped")
			}
			l.event(ev)
		case err, ok := <-errs:
			if !ok {
				return errors.New("health: the file watcher stopped")
			}
			l.watcherFailed(err)
		case <-l.debounceC:
			l.debounced()
		case <-poll.C:
			for rs := range l.polled {
				l.enqueue(rs)
			}
		case <-clock.C:
			if jump := jumps.jump(l.m.wall().Round(0), time.Now()); jump > l.m.opts.ClockJump {
				l.m.log.Info("the wall clock jumped (the machine slept?); re-checking every root", "jump", jump)
				l.enqueueAll()
			}
		case <-sweep.C:
			l.enqueueAll()
		case <-mounts:
			l.m.log.Debug("the mount table changed; re-checking every root")
			l.markAll()
		}
	}
}

// followMounts starts following the mount table until ctx ends: the
// channel returned receives a signal (at most one pending) when it
// changes. When it cannot be followed that is logged, not silent:
// unmounts are then noticed by the periodic checks only.
func (l *loop) followMounts(ctx context.Context) <-chan struct{} {
	mounts := make(chan struct{}, 1)
	go func() {
		if err := l.m.mounts(ctx, mounts); err != nil && ctx.Err() == nil {
			l.m.log.Warn("cannot follow mount changes; an unmounted drive is noticed by the periodic checks only", "err", err)
		}
	}()
	return mounts
}

// queueAsked queues a check of each root Check calls asked about, their
// answers to come when it is done; a path that is no enabled root is
// answered at once.
func (l *loop) queueAsked() {
	for p, waiting := range l.m.takeAsked() {
		rs := l.roots[p]
		if rs == nil {
			tell(waiting, answer{err: fmt.Errorf("%s: %w", p, ErrNotEnabled)})
			continue
		}
		rs.waiting = append(rs.waiting, waiting...)
		l.enqueue(rs)
	}
}

// watcherFailed marks every root changed after the file watcher reported
// err: an overflow lost events; any other error may have too.
func (l *loop) watcherFailed(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		l.m.log.Info("file events were lost; re-checking every root")
	} else {
		l.m.log.Warn("file watcher error; re-checking every root", "err", err)
	}
	l.markAll()
}

// debounced queues the roots whose files changed, once the changes have
// settled.
func (l *loop) debounced() {
	l.debounceC = nil
	for rs := range l.dirty {
		l.enqueue(rs)
	}
	clear(l.dirty)
}

// wallClock notices the wall clock jumping against the monotonic one: the
// machine slept (while it slept, drives may have gone and come, unseen),
// or the clock was set. Either calls for a check of every root.
type wallClock struct {
	wall, mono time.Time // both clocks at the last comparison
}

// jump is how far the wall clock moved otherwise than the monotonic one
// since the last comparison, in either direction; wall and mono are both
// clocks now.
func (c *wallClock) jump(wall, mono time.Time) time.Duration {
	drift := wall.Sub(c.wall) - mono.Sub(c.mono)
	if drift < 0 {
		drift = -drift
	}
	c.wall, c.mono = wall, mono
	return drift
}

// tell answers the Check calls waiting (each has room for its answer).
func tell(waiting []chan<- answer, a answer) {
	for _, w := range waiting {
		w <- a
	}
}

// stop answers the Check calls still waiting, ends the workers and closes
// the watcher.
func (l *loop) stop() {
	for _, rs := range l.roots {
		tell(rs.waiting, answer{err: errStopped})
		rs.waiting = nil
	}
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

var _ app.HealthChecker = (*Monitor)(nil)
