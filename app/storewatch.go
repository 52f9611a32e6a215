package app

// Watching the state file for saves made by any process: fsnotify on its
// folder, polling where that is unavailable.

import (
	"context"
	"os"
	"path/filepath"
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
			if filepath.Base(ev.Name) == StateFileName {
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
