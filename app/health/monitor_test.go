package health

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

func TestDeleteAndRecreate(t *testing.T) {
	core := newCore(t)
	root := mkdir(t, t.TempDir(), "proj")
	addPaths(t, core, root)
	start(t, NewMonitor(core, Options{}))

	waitStatus(t, core, root, app.HealthOK)
	if got := visible(core); !contains(got, root) {
		t.Fatalf("visible = %v, want %s in it", got, root)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	h := waitStatus(t, core, root, app.HealthMissing)
	if h.Err == "" || h.MovedTo != "" {
		t.Errorf("missing health = %+v, want an error and no MovedTo", h)
	}
	if got := visible(core); contains(got, root) {
		t.Fatalf("visible = %v after delete", got)
	}
	mkdir(t, root)
	waitStatus(t, core, root, app.HealthOK)
	if got := visible(core); !contains(got, root) {
		t.Fatalf("visible = %v after re-create, want %s in it", got, root)
	}
	// The re-created folder is watched again: a second delete is seen too.
	if err := os.Remove(root); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, core, root, app.HealthMissing)
}

func TestRenameIsMoved(t *testing.T) {
	core := newCore(t)
	base := t.TempDir()
	root := mkdir(t, base, "proj")
	other := mkdir(t, base, "stays")
	addPaths(t, core, root, other)
	start(t, NewMonitor(core, Options{}))
	waitStatus(t, core, root, app.HealthOK)
	waitStatus(t, core, other, app.HealthOK)

	moved := filepath.Join(filepath.Dir(root), "proj-renamed")
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	h := waitStatus(t, core, root, app.HealthMoved)
	if h.MovedTo != moved {
		t.Errorf("MovedTo = %q, want %q", h.MovedTo, moved)
	}
	if got, want := visible(core), []string{other}; !slices.Equal(got, want) {
		t.Errorf("visible = %v, want %v (the new path needs a new consent)", got, want)
	}
	// Moved back: ok again, MovedTo forgotten.
	if err := os.Rename(moved, root); err != nil {
		t.Fatal(err)
	}
	h = waitStatus(t, core, root, app.HealthOK)
	if h.MovedTo != "" {
		t.Errorf("MovedTo = %q after moving back", h.MovedTo)
	}
	// Moved somewhere nobody watches: missing, since where it went is unknown.
	elsewhere := filepath.Join(t.TempDir(), "away")
	if err := os.Rename(root, elsewhere); err != nil {
		t.Fatal(err)
	}
	h = waitStatus(t, core, root, app.HealthMissing)
	if h.MovedTo != "" {
		t.Errorf("MovedTo = %q for a move into an unwatched folder", h.MovedTo)
	}
}

// A shared folder that stops being the folder that was approved is
// withdrawn: replaced by a file, its symlink's target deleted, or swapped
// for a symlink to somewhere else (its path now leads to a folder nobody
// approved).
func TestWithdrawnWhenTheFolderGoes(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup makes the root in base and says its path and how it
		// was given.
		setup  func(t *testing.T, base string) (root, given string)
		change func(t *testing.T, base, root string)
		want   app.HealthStatus
		// errHas, when set, must be in the health's error.
		errHas func(base string) string
	}{
		{"replaced by a file",
			func(t *testing.T, base string) (string, string) { return mkdir(t, base, "proj"), "" },
			func(t *testing.T, base, root string) {
				must(t, os.Remove(root))
				must(t, os.WriteFile(root, []byte("not a folder"), 0o644))
			},
			app.HealthNotDir, nil},
		{"its symlink's target deleted",
			func(t *testing.T, base string) (string, string) {
				target := mkdir(t, base, "real", "proj")
				link := filepath.Join(base, "link")
				must(t, os.Symlink(target, link))
				return target, link
			},
			func(t *testing.T, base, root string) { must(t, os.RemoveAll(root)) },
			app.HealthMissing, nil},
		{"swapped for a symlink",
			func(t *testing.T, base string) (string, string) {
				mkdir(t, base, "secrets")
				return mkdir(t, base, "proj"), ""
			},
			func(t *testing.T, base, root string) {
				must(t, os.Remove(root))
				must(t, os.Symlink(filepath.Join(base, "secrets"), root))
			},
			app.HealthMissing, func(base string) string { return filepath.Join(base, "secrets") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core := newCore(t)
			base := t.TempDir()
			root, given := tc.setup(t, base)
			addRoots(t, core, app.Root{Path: root, Given: given})
			start(t, NewMonitor(core, Options{}))
			waitStatus(t, core, root, app.HealthOK)

			tc.change(t, base, root)
			h := waitStatus(t, core, root, tc.want)
			if tc.errHas != nil && !strings.Contains(h.Err, tc.errHas(base)) {
				t.Errorf("health %+v does not say where the path leads now", h)
			}
			if got := visible(core); contains(got, root) {
				t.Fatalf("visible = %v: the folder is still shared", got)
			}
		})
	}
}

func TestBranch(t *testing.T) {
	core := newCore(t)
	base := t.TempDir()
	repo := mkdir(t, base, "repo")
	mkdir(t, repo, ".git")
	writeHEAD(t, filepath.Join(repo, ".git"), "ref: refs/heads/main\n")
	// A linked worktree: .git is a file naming the git directory.
	wt := mkdir(t, base, "wt")
	wtGit := mkdir(t, repo, ".git", "worktrees", "wt")
	writeHEAD(t, wtGit, "ref: refs/heads/topic\n")
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+wtGit+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := mkdir(t, base, "plain")
	addPaths(t, core, repo, wt, plain)
	counter := &checkCounter{}
	m := NewMonitor(core, Options{})
	m.onCheck = counter.hook
	start(t, m)

	branch := func(path, want string) {
		t.Helper()
		waitHealth(t, core, path, "branch "+want, func(h app.Health) bool { return h.OK() && h.Branch == want })
	}
	branch(repo, "main")
	branch(wt, "topic")
	branch(plain, "")

	writeHEAD(t, filepath.Join(repo, ".git"), "ref: refs/heads/feature/x\n")
	branch(repo, "feature/x")
	writeHEAD(t, filepath.Join(repo, ".git"), "0123456789abcdef0123456789abcdef01234567\n")
	branch(repo, "0123456")
	writeHEAD(t, wtGit, "ref: refs/heads/other\n")
	branch(wt, "other")

	// git init in a plain folder: the branch appears.
	mkdir(t, plain, ".git")
	writeHEAD(t, filepath.Join(plain, ".git"), "ref: refs/heads/trunk\n")
	branch(plain, "trunk")
}

// TestBranchSwitchedRightAfterTheFirstCheck: a branch switch between the
// first check's read of HEAD and the watch of the git directory that check
// found (which only then begins) made no event; it must not be missed.
// (Under load this was TestBranch's "branch feature/x: not so after 30s".)
func TestBranchSwitchedRightAfterTheFirstCheck(t *testing.T) {
	core := newCore(t)
	repo := mkdir(t, t.TempDir(), "repo")
	gitDir := mkdir(t, repo, ".git")
	writeHEAD(t, gitDir, "ref: refs/heads/main\n")
	addPaths(t, core, repo)
	m := NewMonitor(core, Options{})
	var once sync.Once
	m.onChecked = func(path string) {
		if path == repo {
			once.Do(func() { writeHEAD(t, gitDir, "ref: refs/heads/feature/x\n") })
		}
	}
	start(t, m)
	waitHealth(t, core, repo, "branch feature/x", func(h app.Health) bool { return h.OK() && h.Branch == "feature/x" })
}

// writeHEAD replaces HEAD the way git does: HEAD.lock, then rename.
func writeHEAD(t *testing.T, gitDir, content string) {
	t.Helper()
	lock := filepath.Join(gitDir, "HEAD.lock")
	if err := os.WriteFile(lock, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(lock, filepath.Join(gitDir, "HEAD")); err != nil {
		t.Fatal(err)
	}
}

func TestBranchFromHEAD(t *testing.T) {
	for _, tc := range []struct{ head, want string }{
		{"ref: refs/heads/main\n", "main"},
		{"ref:refs/heads/feat/a", "feat/a"},
		{"ref: refs/remotes/origin/main\n", "remotes/origin/main"},
		{"0123456789abcdef0123456789abcdef01234567\n", "0123456"},
		{"garbage", ""},
		{"", ""},
	} {
		if got := branchFromHEAD([]byte(tc.head)); got != tc.want {
			t.Errorf("branchFromHEAD(%q) = %q, want %q", tc.head, got, tc.want)
		}
	}
}

// A checkout or a big copy inside a root costs no check at all; a flurry
// of chmods of the root costs one check, and a steady stream of them one
// check per Debounce, not one per event. In a synctest bubble the events
// arrive in order and the clock moves only when everything waits, so the
// counts are exact.
func TestBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		core := newCore(t)
		root := mkdir(t, t.TempDir(), "proj")
		addPaths(t, core, root)
		w := newSilentWatcher()
		counter := &checkCounter{}
		m := NewMonitor(core, Options{Watcher: w})
		m.onCheck, m.mounts = counter.hook, noMounts
		start(t, m)
		waitStatus(t, core, root, app.HealthOK)
		synctest.Wait()
		checks := func() int { return counter.get(root) }
		before := checks()

		for i := range 5000 {
			w.events <- fsnotify.Event{Name: filepath.Join(root, "f"+strconv.Itoa(i)), Op: fsnotify.Create}
			w.events <- fsnotify.Event{Name: filepath.Join(root, "f"+strconv.Itoa(i)), Op: fsnotify.Write}
		}
		time.Sleep(3 * DefaultDebounce) // past any window the events could have opened
		synctest.Wait()
		if n := checks() - before; n != 0 {
			t.Errorf("5,000 files written inside the root cost %d checks, want none", n)
		}

		before = checks()
		for range 400 {
			w.events <- fsnotify.Event{Name: root, Op: fsnotify.Chmod}
		}
		time.Sleep(DefaultDebounce)
		synctest.Wait()
		if n := checks() - before; n != 1 {
			t.Errorf("400 chmods of the root at once cost %d checks, want 1", n)
		}

		before = checks()
		for range 100 { // over ten Debounces
			w.events <- fsnotify.Event{Name: root, Op: fsnotify.Chmod}
			time.Sleep(DefaultDebounce / 10)
		}
		time.Sleep(DefaultDebounce)
		synctest.Wait()
		if n := checks() - before; n < 10 || n > 11 {
			t.Errorf("a chmod every Debounce/10 for ten Debounces cost %d checks, want 10 or 11 (one a window)", n)
		}
		if h := core.Snapshot().Health[root]; !h.OK() {
			t.Errorf("health after the bursts: %+v", h)
		}
	})
}

func TestThousandRoots(t *testing.T) {
	const n = 1000
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
		limit, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if limit < 3*n {
			if os.Getuid() != 0 {
				t.Fatalf("fs.inotify.max_user_watches is %d; %d roots need about %d watches", limit, n, 2*n)
			}
			if err := os.WriteFile("/proc/sys/fs/inotify/max_user_watches", []byte(strconv.Itoa(8*n)), 0o644); err != nil {
				t.Fatalf("raising fs.inotify.max_user_watches from %d: %v", limit, err)
			}
		}
	}
	core := newCore(t)
	base := t.TempDir()
	paths := make([]string, n)
	for i := range paths {
		// Each in its own parent: 2,000 watches.
		paths[i] = mkdir(t, base, fmt.Sprintf("p%04d", i), "proj")
	}
	addPaths(t, core, paths...)
	began := time.Now()
	start(t, NewMonitor(core, Options{}))
	for _, p := range paths {
		waitStatus(t, core, p, app.HealthOK)
	}
	t.Logf("%d roots checked and watched in %v", n, time.Since(began).Round(time.Millisecond))
	if msg := core.Snapshot().Notices[NoticeTopic]; msg != "" {
		t.Fatalf("notice %q, want none", msg)
	}
	for _, i := range []int{0, 499, n - 1} {
		if err := os.Remove(paths[i]); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, core, paths[i], app.HealthMissing)
	}
	if got := len(visible(core)); got != n-3 {
		t.Errorf("%d visible, want %d", got, n-3)
	}
}

// When the watch limit is hit the roots are polled, and the notice says so
// once.
func TestLimitFallsBackToPolling(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EMFILE} {
		t.Run(errno.Error(), func(t *testing.T) {
			core := newCore(t)
			base := t.TempDir()
			watched := mkdir(t, base, "a", "watched")
			polled := mkdir(t, base, "b", "polled")
			polled2 := mkdir(t, base, "c", "polled2")
			addPaths(t, core, watched, polled, polled2)
			real, err := newFSWatcher()
			if err != nil {
				t.Fatal(err)
			}
			var lifted atomic.Bool
			lw := &limitWatcher{Watcher: real, err: errno, fail: func(p string) bool {
				return !lifted.Load() && !strings.HasPrefix(p, filepath.Dir(watched))
			}}
			var notices []string
			sub, cancel := core.Subscribe()
			defer cancel()
			stop := make(chan struct{})
			collected := make(chan []string)
			go func() {
				last := ""
				var seen []string
				look := func() {
					if msg := core.Snapshot().Notices[NoticeTopic]; msg != last {
						seen = append(seen, msg)
						last = msg
					}
				}
				for {
					select {
					case <-sub:
						look()
					case <-stop:
						look()
						collected <- seen
						return
					}
				}
			}()
			counter := &checkCounter{}
			m := NewMonitor(core, Options{Watcher: lw, PollInterval: 50 * time.Millisecond})
			m.onCheck = counter.hook
			start(t, m)
			for _, p := range []string{watched, polled, polled2} {
				waitStatus(t, core, p, app.HealthOK)
			}
			if err := os.Remove(polled); err != nil {
				t.Fatal(err)
			}
			waitStatus(t, core, polled, app.HealthMissing)
			mkdir(t, polled)
			waitStatus(t, core, polled, app.HealthOK)
			if err := os.Remove(watched); err != nil {
				t.Fatal(err)
			}
			waitStatus(t, core, watched, app.HealthMissing)
			// Three more polls go by: still one notice.
			polls := counter.get(polled2)
			apptest.Eventually(t, "three more polls", func() (bool, string) {
				n := counter.get(polled2) - polls
				return n >= 3, fmt.Sprintf("%d polls", n)
			})
			// The limit is raised: the next polls watch the folders, and the
			// notice goes.
			lifted.Store(true)
			apptest.Until(t, core, "the notice to go once the limit is lifted", func(s *app.Snapshot) bool { return s.Notices[NoticeTopic] == "" })
			close(stop)
			notices = <-collected
			if len(notices) != 2 || !strings.Contains(notices[0], "limit") || notices[1] != "" {
				t.Errorf("notices = %q, want one about the limit, then none", notices)
			}
			// Watched now: a deletion is seen without polling.
			if err := os.Remove(polled2); err != nil {
				t.Fatal(err)
			}
			waitStatus(t, core, polled2, app.HealthMissing)
		})
	}
}

// No watcher at all (inotify instances exhausted): everything is polled,
// every PollInterval.
func TestNoWatcherPolls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		core := newCore(t)
		root := mkdir(t, t.TempDir(), "proj")
		addPaths(t, core, root)
		m := NewMonitor(core, Options{Watcher: &limitWatcher{err: syscall.EMFILE, fail: func(string) bool { return true }, Watcher: newSilentWatcher()}})
		m.mounts = noMounts
		start(t, m)
		waitStatus(t, core, root, app.HealthOK)
		if msg := core.Snapshot().Notices[NoticeTopic]; msg == "" {
			t.Error("no notice")
		}
		os.Remove(root)
		time.Sleep(DefaultPollInterval - time.Millisecond)
		synctest.Wait()
		if h := core.Snapshot().Health[root]; !h.OK() {
			t.Fatalf("health %+v before the poll: something else looked", h)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if h := core.Snapshot().Health[root]; h.Status != app.HealthMissing {
			t.Fatalf("health %+v after a poll, want missing", h)
		}
	})
}

// A wall clock that jumps (the machine slept) has every root checked again,
// once; a wall clock that keeps pace with the monotonic one has none
// checked.
func TestClockJumpRechecksAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		core := newCore(t)
		base := t.TempDir()
		var paths []string
		for i := range 5 {
			paths = append(paths, mkdir(t, base, strconv.Itoa(i)))
		}
		addPaths(t, core, paths...)
		counter := &checkCounter{}
		var offset atomic.Int64
		m := NewMonitor(core, Options{Watcher: newSilentWatcher(), ClockJump: time.Minute})
		m.onCheck, m.mounts = counter.hook, noMounts
		m.wall = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
		start(t, m)
		for _, p := range paths {
			waitStatus(t, core, p, app.HealthOK)
		}
		time.Sleep(10 * clockTick) // ten comparisons without a jump
		synctest.Wait()
		if got := counter.total(); got != len(paths) {
			t.Fatalf("%d checks before the jump, want %d", got, len(paths))
		}
		// Nobody sees this (the watcher is silent), as after a sleep.
		os.Remove(paths[2])
		offset.Store(int64(time.Hour))
		time.Sleep(clockTick)
		synctest.Wait()
		if h := core.Snapshot().Health[paths[2]]; h.Status != app.HealthMissing {
			t.Errorf("health %+v after the jump, want missing", h)
		}
		time.Sleep(10 * clockTick) // and no third check follows
		synctest.Wait()
		for _, p := range paths {
			if got := counter.get(p); got != 2 {
				t.Errorf("%s checked %d times, want 2", p, got)
			}
		}
	})
}

// A folder above the parent is not watched: the sweep, once a minute,
// finds what it does.
func TestSweep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		core := newCore(t)
		root := mkdir(t, t.TempDir(), "proj")
		addPaths(t, core, root)
		m := NewMonitor(core, Options{Watcher: newSilentWatcher()})
		m.mounts = noMounts
		start(t, m)
		waitStatus(t, core, root, app.HealthOK)
		os.Remove(root)
		time.Sleep(defaultSweep - time.Millisecond)
		synctest.Wait()
		if h := core.Snapshot().Health[root]; !h.OK() {
			t.Fatalf("health %+v before the sweep: something else looked", h)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if h := core.Snapshot().Health[root]; h.Status != app.HealthMissing {
			t.Fatalf("health %+v after the sweep, want missing", h)
		}
	})
}

func TestOverflowRechecksAll(t *testing.T) {
	core := newCore(t)
	base := t.TempDir()
	a, b := mkdir(t, base, "a"), mkdir(t, base, "b")
	addPaths(t, core, a, b)
	w := newSilentWatcher()
	start(t, NewMonitor(core, Options{Watcher: w}))
	waitStatus(t, core, a, app.HealthOK)
	waitStatus(t, core, b, app.HealthOK)
	os.Remove(b)
	w.errs <- fsnotify.ErrEventOverflow
	waitStatus(t, core, b, app.HealthMissing)
}

// Check checks a root now and answers with the health it published; a
// path that is no enabled root is refused.
func TestCheck(t *testing.T) {
	core := newCore(t)
	root := mkdir(t, t.TempDir(), "proj")
	off := mkdir(t, t.TempDir(), "off")
	addPaths(t, core, root, off)
	setEnabled(t, core, off, false)
	m := NewMonitor(core, Options{Watcher: newSilentWatcher()})
	start(t, m)
	waitStatus(t, core, root, app.HealthOK)
	os.Remove(root) // nobody sees this: the watcher is silent
	if h := check(t, m, root); h.Status != app.HealthMissing || h.Err == "" {
		t.Errorf("Check after the folder went: %+v, want missing and why", h)
	}
	if h := core.Snapshot().Health[root]; h.Status != app.HealthMissing {
		t.Errorf("published %+v once Check returned, want missing", h)
	}
	mkdir(t, root)
	if h := check(t, m, root); !h.OK() {
		t.Errorf("Check after the folder came back: %+v", h)
	}
	for _, p := range []string{"/not/a/root", off} {
		if _, err := m.Check(context.Background(), p); !errors.Is(err, ErrNotEnabled) || !strings.Contains(err.Error(), p) {
			t.Errorf("Check(%s): %v, want ErrNotEnabled naming it", p, err)
		}
	}
	// A monitor that is not running does not answer: the caller's
	// context ends the wait.
	idle := NewMonitor(core, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := idle.Check(ctx, root); !errors.Is(err, context.Canceled) {
		t.Errorf("Check of a monitor not running: %v", err)
	}
}

// A check that began before Check was called does not answer it: the
// folder may have changed since it looked.
func TestCheckWaitsForACheckBegunAfterIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		core := newCore(t)
		root := mkdir(t, t.TempDir(), "proj")
		addPaths(t, core, root)
		counter := &checkCounter{}
		var hold atomic.Bool
		held, release := make(chan struct{}), make(chan struct{})
		m := NewMonitor(core, Options{Watcher: newSilentWatcher()})
		m.mounts = noMounts
		m.onCheck = func(p string) {
			counter.hook(p)
			if hold.CompareAndSwap(true, false) {
				close(held)
				<-release
			}
		}
		start(t, m)
		waitStatus(t, core, root, app.HealthOK)

		hold.Store(true)
		ask := func(answered chan<- error) {
			_, err := m.Check(t.Context(), root)
			answered <- err
		}
		first, second := make(chan error, 1), make(chan error, 1)
		go ask(first)
		<-held // the first check is under way
		go ask(second)
		synctest.Wait() // the second ask has reached the monitor
		before := counter.get(root)
		close(release)
		for _, answered := range []chan error{first, second} {
			if err := <-answered; err != nil {
				t.Fatal(err)
			}
		}
		if n := counter.get(root) - before; n != 1 {
			t.Errorf("the second Check was answered after %d more checks, want 1: the one under way began before it asked", n)
		}
	})
}

// A disabled root is not watched; its health goes back to unknown, so that
// enabling it again waits for a fresh check.
func TestDisableAndEnable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		core := newCore(t)
		root := mkdir(t, t.TempDir(), "proj")
		addPaths(t, core, root)
		w := newSilentWatcher()
		counter := &checkCounter{}
		m := NewMonitor(core, Options{Watcher: w})
		m.onCheck, m.mounts = counter.hook, noMounts
		start(t, m)
		waitStatus(t, core, root, app.HealthOK)
		setEnabled(t, core, root, false)
		waitStatus(t, core, root, app.HealthUnknown)
		synctest.Wait()
		checks := counter.get(root)
		os.Remove(root)
		w.events <- fsnotify.Event{Name: root, Op: fsnotify.Remove}
		time.Sleep(3 * DefaultDebounce)
		synctest.Wait()
		if h := core.Snapshot().Health[root]; h.Status != app.HealthUnknown {
			t.Errorf("disabled root's health = %+v, want unknown", h)
		}
		if n := counter.get(root) - checks; n != 0 {
			t.Errorf("a disabled root was checked %d times", n)
		}
		setEnabled(t, core, root, true)
		waitStatus(t, core, root, app.HealthMissing)
		mkdir(t, root)
		w.events <- fsnotify.Event{Name: root, Op: fsnotify.Create}
		waitStatus(t, core, root, app.HealthOK)
	})
}

func setEnabled(t *testing.T, core *app.Core, path string, on bool) {
	t.Helper()
	if err := core.Update(func(s *app.State) error { return s.SetEnabled(path, on) }); err != nil {
		t.Fatal(err)
	}
}

// An unmounted drive leaves its mount point behind, on another device.
func TestUnmount(t *testing.T) {
	if !apptest.Privileged() {
		apptest.Missing(t, "mounting needs root")
	}
	mp := mkdir(t, t.TempDir(), "drive")
	if out, err := exec.Command("mount", "-t", "tmpfs", "rootkeeper-test", mp).CombinedOutput(); err != nil {
		apptest.Missing(t, fmt.Sprintf("cannot mount a tmpfs here: %v: %s", err, out))
	}
	mounted := true
	t.Cleanup(func() {
		if mounted {
			exec.Command("umount", mp).Run()
		}
	})
	root := mkdir(t, mp, "proj")
	core := newCore(t)
	addRoots(t, core, app.Root{Path: mp, Device: app.DeviceOf(mp)}, app.Root{Path: root, Device: app.DeviceOf(root)})
	start(t, NewMonitor(core, Options{}))
	waitStatus(t, core, mp, app.HealthOK)
	waitStatus(t, core, root, app.HealthOK)
	if out, err := exec.Command("umount", mp).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v: %s", err, out)
	}
	mounted = false
	waitStatus(t, core, mp, app.HealthUnmounted)
	waitStatus(t, core, root, app.HealthMissing)
}

// chmod 000 withdraws a root and chmod 755 brings it back, and a root that
// is enabled while unreadable never becomes visible. Run as an unprivileged
// user: root reads anything.
func TestUnreadable(t *testing.T) {
	if !apptest.AsNobody(t) {
		return
	}
	core := newCore(t)
	base := t.TempDir()
	root := mkdir(t, base, "proj")
	locked := mkdir(t, base, "locked")
	addPaths(t, core, root)
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)

	// Record every visible set ever published.
	sub, cancel := core.Subscribe()
	defer cancel()
	leaked := make(chan string, 1)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		look := func() {
			if v := visible(core); contains(v, locked) {
				select {
				case leaked <- fmt.Sprint(v):
				default:
				}
			}
		}
		for {
			select {
			case <-sub:
				look()
			case <-stop:
				look() // what was published last
				return
			}
		}
	}()
	stopRecording := sync.OnceFunc(func() { close(stop); <-stopped })
	defer stopRecording()

	start(t, NewMonitor(core, Options{}))
	waitStatus(t, core, root, app.HealthOK)
	if err := os.Chmod(root, 0); err != nil {
		t.Fatal(err)
	}
	h := waitStatus(t, core, root, app.HealthUnreadable)
	if !strings.Contains(h.Err, "permission denied") {
		t.Errorf("Err = %q, want the OS error", h.Err)
	}
	if got := visible(core); contains(got, root) {
		t.Errorf("visible = %v with %s unreadable", got, root)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, core, root, app.HealthOK)
	if got := visible(core); !contains(got, root) {
		t.Errorf("visible = %v after chmod 755", got)
	}

	// Enabled (and allowed) while unreadable: never visible.
	addPaths(t, core, locked)
	waitStatus(t, core, locked, app.HealthUnreadable)
	stopRecording()
	select {
	case v := <-leaked:
		t.Errorf("an unreadable root was visible: %s", v)
	default:
	}
	// Unlocked: it appears.
	if err := os.Chmod(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, core, locked, app.HealthOK)
}
