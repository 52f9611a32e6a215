package app

// Watching the state file for saves made by any process: fsnotify on its
// folder, polling where that is unavailable.

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch calls onChange (from one goroutine) soon after the state file is
// replaced by anyone, until ctx ends; and once as soon as it watches, for a
// change made after the caller last read the file but before the watch was
// in place. It uses fsnotify on the folder and falls back to polling every
// 250 ms when fsnotify is unavailable.
func (s *Store) Watch(ctx context.Context, onChange func()) error {
	w, err := fsnotify.NewWatcher()
	if err == nil {
		err = w.Add(s.dir)
		if err != nil {
			w.Close()
		}
	}
	if err != nil {
		return s.poll(ctx, onChange)
	}
	defer w.Close()
	onChange() // what changed before the watch was in place
	// The first change is reported at once (a grant reaches a bridged
	// server in milliseconds, not after a delay); the changes that follow
	// within 20 ms are folded into one more call at its end.
	var quiet <-chan time.Time
	pending := false
	changed := func() {
		if quiet != nil {
			pending = true
			return
		}
		onChange()
		quiet = time.After(20 * time.Millisecond)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if s.isChange(ev) {
				changed()
			}
		case <-w.Errors:
			// An overflow may have hidden a change: look anyway.
			changed()
		case <-quiet:
			quiet = nil
			if pending {
				pending = false
				changed()
			}
		}
	}
}

// isChange says whether ev, seen in the state folder, may have changed
// what the state file holds. The file's name taken away (a rename from it)
// counts only when no file is there now: a save swaps the spare in
// (RENAME_EXCHANGE), which the kernel reports as the new file's arrival
// and then as the old one's departure, both under the state file's name.
// The arrival is the change; counting the departure too began a second
// quiet spell after each save, in which a save that followed was reported
// up to 20 ms late (TestReachWithNobodyToAsk read the state the app
// showed before a command's save, 16 runs in 20). Every way new bytes
// come under the name (a create, a rename to it, a write) has its own
// event. Only on Linux, where saves swap (and inotify's events are these):
// elsewhere every event under the name counts, as the watch's backends
// there report a file replaced in their own ways.
func (s *Store) isChange(ev fsnotify.Event) bool {
	if filepath.Base(ev.Name) != StateFileName {
		return false
	}
	if runtime.GOOS == "linux" && ev.Op&^fsnotify.Rename == 0 {
		_, err := os.Lstat(ev.Name)
		return err != nil
	}
	return true
}

func (s *Store) poll(ctx context.Context, onChange func()) error {
	last, _ := os.Stat(s.Path())
	onChange() // what changed before the first look
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			fi, err := os.Stat(s.Path())
			if err != nil {
				continue
			}
			if last == nil || !os.SameFile(fi, last) || fi.ModTime() != last.ModTime() || fi.Size() != last.Size() {
				onChange()
				last = fi
			}
		}
	}
}
