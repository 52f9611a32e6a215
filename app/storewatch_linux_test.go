package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Each save is one change to the state file's watch (Linux), however the save
// replaces the file (the spare swapped in reports the new file's arrival
// and the old one's departure under the same name), and a file moved away
// is one change too. Counting the swap's departure as well began a second
// quiet spell after every save, in which the app showed a command's save
// up to 20 ms late (TestReachWithNobodyToAsk/headless failed 16 runs in
// 20).
func TestASaveIsOneChange(t *testing.T) {
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(s.Dir()); err != nil {
		t.Fatal(err)
	}
	// changes counts the changes isChange sees until the marker file
	// appears: inotify reports a folder's events in order, so every event
	// of what came before the marker has been seen by then.
	marks := 0
	changes := func() int {
		t.Helper()
		marks++
		marker := filepath.Join(s.Dir(), "marker-"+string(rune('a'+marks)))
		if err := os.WriteFile(marker, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		n := 0
		timeout := time.After(10 * time.Second)
		for {
			select {
			case ev := <-w.Events:
				if ev.Name == marker {
					return n
				}
				if s.isChange(ev) {
					n++
				}
			case err := <-w.Errors:
				t.Fatal(err)
			case <-timeout:
				t.Fatal("the marker's event never came")
			}
		}
	}
	for i := range 4 { // the first save makes the file, the second the spare
		if _, err := s.Update(func(st *State) error { st.Paused = i%2 == 0; return nil }); err != nil {
			t.Fatal(err)
		}
		if n := changes(); n != 1 {
			t.Fatalf("save %d was %d changes, want 1", i+1, n)
		}
	}
	if err := os.Rename(s.Path(), filepath.Join(s.Dir(), "elsewhere")); err != nil {
		t.Fatal(err)
	}
	if n := changes(); n != 1 {
		t.Fatalf("the file moved away was %d changes, want 1", n)
	}
}
