package policy

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch calls onChange with the policy each time it changes, until ctx
// ends: the folder that holds the file is watched (or the nearest one
// above it, until the file's folder appears). Where the registry holds it
// (Windows), it is read again every pollEvery as well.
func Watch(ctx context.Context, current Policy, onChange func(Policy)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	watched := ""
	watch := func() {
		for d := filepath.Dir(location); ; d = filepath.Dir(d) {
			if _, err := os.Stat(d); err == nil {
				if d != watched {
					if watched != "" {
						w.Remove(watched)
					}
					if w.Add(d) == nil {
						watched = d
					}
				}
				return
			}
			if d == filepath.Dir(d) {
				return
			}
		}
	}
	watch()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.Events:
		case <-w.Errors:
		case <-tick.C:
		}
		watch()
		if p := Load(); !reflect.DeepEqual(p, current) {
			current = p
			onChange(p)
		}
	}
}

// pollEvery is how often the policy is read again whatever the watch
// says: a registry value has no file to watch.
const pollEvery = 30 * time.Second
