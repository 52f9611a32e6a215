package audit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"
)

// answer is a line of the trail: server told roots at at.
func answer(at time.Time, server string, roots ...string) Entry {
	return Entry{Time: at, Server: server, Via: ViaRootsList, Roots: append([]string{}, roots...)}
}

// follow calls f.Entries and checks its answer against Read's.
func follow(t *testing.T, f *Follower, dir string) ([]Entry, bool) {
	t.Helper()
	got, changed, err := f.Entries()
	if err != nil {
		t.Fatal(err)
	}
	want, err := Read(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
		t.Fatalf("the follower holds %d entries, Read %d:\nfollower %v\nread     %v", len(got), len(want), got, want)
	}
	return got, changed
}

// After the first read, a Follower parses only the lines appended since,
// and says whether anything changed.
func TestFollowerReadsOnlyWhatWasAppended(t *testing.T) {
	dir := t.TempDir()
	f := NewFollower(dir)
	if got, changed := follow(t, f, dir); len(got) != 0 || !changed {
		t.Fatalf("no log: %d entries, changed %v; want none, changed (the first read)", len(got), changed)
	}
	l := NewLog(dir)
	l.NoiseBudget = math.MaxInt
	for i := range 100 {
		l.Append(answer(t0.Add(time.Duration(i)*time.Second), "fs", fmt.Sprintf("file:///p/%d", i)))
		l.Append(attempt(t0.Add(time.Duration(i)*time.Second), "nosy", "", fmt.Sprintf("/home/p/missing-%d", i), ReachIgnored))
	}
	l.Close()
	follow(t, f, dir)
	parsed := f.parsed
	if parsed < 200 {
		t.Fatalf("parsed %d lines of a log of 200", parsed)
	}
	l.Append(answer(t0.Add(time.Hour), "fs", "file:///p/new"))
	l.Close()
	got, changed := follow(t, f, dir)
	if !changed || got[len(got)-1].Roots[0] != "file:///p/new" {
		t.Fatalf("the appended line: changed %v, last %+v", changed, got[len(got)-1])
	}
	if f.parsed != parsed+1 {
		t.Fatalf("one line appended, %d parsed", f.parsed-parsed)
	}
	if _, changed := follow(t, f, dir); changed || f.parsed != parsed+1 {
		t.Fatalf("nothing appended: changed %v, %d more lines parsed", changed, f.parsed-parsed-1)
	}
}

// A line being written is read once it is whole, and a line cut short
// by a crash (not JSON once the next line follows it) is skipped.
func TestFollowerWaitsForAWholeLine(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	l.Append(answer(t0, "fs", "file:///a"))
	l.Close()
	f := NewFollower(dir)
	follow(t, f, dir)
	path := filepath.Join(dir, FileName)
	line, err := appendEntry(nil, answer(t0.Add(time.Second), "fs", "file:///b"))
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	file.Write(line[:len(line)/2])
	if got, changed := follow(t, f, dir); changed || len(got) != 1 {
		t.Fatalf("half a line: changed %v, %d entries; want it left for later", changed, len(got))
	}
	file.Write(line[len(line)/2:])
	file.Write([]byte("\n"))
	if got, changed := follow(t, f, dir); !changed || len(got) != 2 || got[1].Roots[0] != "file:///b" {
		t.Fatalf("the line made whole: changed %v, %+v", changed, got)
	}
	file.Write([]byte(`{"time":"2026-11-22T10:00:0`)) // a crash
	l.Append(answer(t0.Add(2*time.Second), "fs", "file:///c"))
	l.Close()
	if got, _ := follow(t, f, dir); len(got) != 2 {
		t.Fatalf("after a cut line and another: %+v", got)
	}
}

// Whatever is written — lines of the trail and the noise, out of time
// order (an attempt logged when the call it held ended), at the same time
// as lines of the other file, past both files' sizes so that each is
// rotated again and again — the Follower holds what Read returns, and a
// slice it returned before never changes.
func TestFollowerHoldsWhatReadReturns(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	l.NoiseBudget = math.MaxInt
	l.MaxSize, l.NoiseMaxSize = 4<<10, 3<<10
	f := NewFollower(dir)
	rng := rand.New(rand.NewPCG(1, 2))
	var returned [][]Entry
	var copies [][]Entry
	rotations := 0
	last := map[string]os.FileInfo{}
	for step := range 400 {
		for range rng.IntN(6) {
			at := t0.Add(time.Duration(step+rng.IntN(8)-4) * time.Second)
			if rng.IntN(2) == 0 {
				l.Append(answer(at, "fs", fmt.Sprintf("file:///p/%d", rng.IntN(1000))))
			} else {
				l.Append(attempt(at, "nosy", "", fmt.Sprintf("/home/p/missing-%d", rng.IntN(1000)), ReachIgnored))
			}
		}
		l.Close()
		got, _ := follow(t, f, dir)
		returned, copies = append(returned, got), append(copies, slices.Clone(got))
		for _, name := range []string{FileName, NoiseName} {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
				if was, ok := last[name]; ok && !os.SameFile(was, fi) {
					rotations++
				}
				last[name] = fi
			}
		}
	}
	if rotations < 4 {
		t.Fatalf("the files were rotated %d times; the test means them to be, again and again", rotations)
	}
	for i := range returned {
		if !reflect.DeepEqual(returned[i], copies[i]) {
			t.Fatalf("the slice returned at step %d changed after", i)
		}
	}
}

// A Follower read while another writer appends (and rotates) holds, once
// the writer is done, what Read returns.
func TestFollowerWhileWritten(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	l.NoiseBudget = math.MaxInt
	l.MaxSize, l.NoiseMaxSize = 64<<10, 32<<10
	f := NewFollower(dir)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 5000 {
			at := t0.Add(time.Duration(i) * time.Millisecond)
			l.Append(answer(at, "fs", fmt.Sprintf("file:///p/%d", i)))
			l.Append(attempt(at, "nosy", "", fmt.Sprintf("/home/p/missing-%d", i), ReachIgnored))
		}
		l.Close()
	})
	reads := 0
	for done := false; !done; reads++ {
		done = waitTimeout(&wg, 0)
		if _, _, err := f.Entries(); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := follow(t, f, dir)
	if len(got) == 0 || reads < 2 {
		t.Fatalf("%d entries after %d reads", len(got), reads)
	}
}

// waitTimeout reports whether wg is done within d.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// A file first written and rotated between two reads (the noise of a
// server that floods at once) is read whole, both its generations.
func TestFollowerFileRotatedBeforeItWasRead(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	l.NoiseBudget = math.MaxInt
	l.NoiseMaxSize = 2 << 10
	l.Append(answer(t0, "fs", "file:///a"))
	l.Close()
	f := NewFollower(dir)
	follow(t, f, dir)
	for i := range 100 {
		l.Append(attempt(t0.Add(time.Duration(i)*time.Second), "nosy", "", fmt.Sprintf("/home/p/missing-%d", i), ReachIgnored))
	}
	l.Close()
	if _, err := os.Stat(filepath.Join(dir, NoiseRotatedName)); err != nil {
		t.Fatalf("the noise was not rotated: %v", err)
	}
	follow(t, f, dir)
}
