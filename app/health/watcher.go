package health

import (
	"errors"
	"syscall"

	"github.com/fsnotify/fsnotify"
)

// Watcher is the part of fsnotify the monitor uses. The real one wraps
// fsnotify.Watcher; tests inject one whose Add fails with ENOSPC or EMFILE.
type Watcher interface {
	Add(path string) error
	Remove(path string) error
	Events() <-chan fsnotify.Event
	Errors() <-chan error
	Close() error
}

// eventBuffer decouples fsnotify's reader from the monitor's loop, so a short
// stall of the loop does not back events up into the kernel queue.
const eventBuffer = 1024

type fsWatcher struct{ w *fsnotify.Watcher }

// newFSWatcher is an fsnotify watcher behind the Watcher interface.
func newFSWatcher() (Watcher, error) {
	w, err := fsnotify.NewBufferedWatcher(eventBuffer)
	if err != nil {
		return nil, err
	}
	return fsWatcher{w}, nil
}

func (f fsWatcher) Add(path string) error         { return f.w.Add(path) }
func (f fsWatcher) Remove(path string) error      { return f.w.Remove(path) }
func (f fsWatcher) Events() <-chan fsnotify.Event { return f.w.Events }
func (f fsWatcher) Errors() <-chan error          { return f.w.Errors }
func (f fsWatcher) Close() error                  { return f.w.Close() }

// isLimit reports whether err says the kernel's watch limit
// (fs.inotify.max_user_watches: ENOSPC) or instance or descriptor limit
// (fs.inotify.max_user_instances, RLIMIT_NOFILE: EMFILE) was hit.
func isLimit(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}
