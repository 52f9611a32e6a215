package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestAppendThenRunsOnceWritten: fifty writers, as the answers one change
// gives fifty servers, each appending ten lines one after another (the
// next once the last one's then has run). Every then runs exactly once,
// and only when its line is in the file: what a server is answered once
// then has run survives Rootkeeper being killed right after. Each server's
// lines are in the file in its order, none lost or doubled.
func TestAppendThenRunsOnceWritten(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	const servers, each = 50, 10
	var wg sync.WaitGroup
	for i := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			server := fmt.Sprintf("s%02d", i)
			for j := range each {
				root := fmt.Sprintf("file:///r/%s-%d", server, j)
				called := make(chan error, 2)
				l.AppendThen(Entry{Server: server, Roots: []string{root}, Via: ViaRootsList}, func(err error) {
					if err == nil {
						if data, rerr := os.ReadFile(l.Path()); rerr != nil || !bytes.Contains(data, []byte(`"`+root+`"`)) {
							err = fmt.Errorf("then ran before %s was in the file (%v)", root, rerr)
						}
					}
					called <- err
				})
				if err := <-called; err != nil {
					t.Error(err)
					return
				}
				if len(called) > 0 {
					t.Errorf("then of %s ran twice", root)
				}
			}
		}()
	}
	wg.Wait()
	got, err := Read(dir, "")
	if err != nil || len(got) != servers*each {
		t.Fatalf("read %d entries, %v; want %d", len(got), err, servers*each)
	}
	next := map[string]int{}
	for _, e := range got {
		if want := fmt.Sprintf("file:///r/%s-%d", e.Server, next[e.Server]); !slices.Equal(e.Roots, []string{want}) {
			t.Fatalf("%s's line %d is %v; want [%s]", e.Server, next[e.Server], e.Roots, want)
		}
		next[e.Server]++
	}
}

// TestCommitRotatesWithinABatch: lines queued while a write is under way
// are written together, yet the trail is rotated before the line that
// would take it past MaxSize, as when each line is written alone, and
// their thens run in the order the lines were queued, after the write.
func TestCommitRotatesWithinABatch(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	l.MaxSize = 400
	l.mu.Lock()
	l.writing = true // a write under way: what follows is queued
	l.mu.Unlock()
	var order []int
	for i := range 20 {
		l.AppendThen(Entry{Server: "s", Roots: []string{"file:///x/" + strings.Repeat("a", i)}, Via: ViaRootsList}, func(err error) {
			if err != nil {
				t.Error(err)
			}
			order = append(order, i)
		})
	}
	if len(order) > 0 {
		t.Fatalf("thens %v ran before their lines were written", order)
	}
	l.commit()
	if want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}; !slices.Equal(order, want) {
		t.Errorf("thens ran in the order %v; want %v", order, want)
	}
	l.Close()
	for _, name := range []string{FileName, RotatedName} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 400 {
			t.Errorf("%s is %d bytes, over the 400 limit", name, fi.Size())
		}
	}
	got, err := Read(dir, "")
	if err != nil || len(got) == 0 {
		t.Fatalf("read %d entries, %v", len(got), err)
	}
	if last := got[len(got)-1].Roots[0]; last != "file:///x/"+strings.Repeat("a", 19) {
		t.Errorf("last entry %q, want the last queued", last)
	}
	for i := 1; i < len(got); i++ {
		if len(got[i].Roots[0]) != len(got[i-1].Roots[0])+1 {
			t.Fatalf("entries out of order at %d: %v then %v", i, got[i-1].Roots, got[i].Roots)
		}
	}
}

// TestCloseWritesWhatIsQueued: Close waits for the write under way and
// writes what was queued meanwhile; nothing queued is lost.
func TestCloseWritesWhatIsQueued(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	l.mu.Lock()
	l.writing = true
	l.mu.Unlock()
	ran := make(chan struct{})
	l.AppendThen(Entry{Server: "s", Via: ViaRootsList}, func(error) { close(ran) })
	closed := make(chan error)
	go func() { closed <- l.Close() }()
	go l.commit() // the write under way ends
	<-ran
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if got, err := Read(dir, "s"); err != nil || len(got) != 1 {
		t.Fatalf("read %d entries, %v; want 1", len(got), err)
	}
}
