package audit

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkAppendFlood: a million distinct attempts of one server within a
// minute (by their times), after the person's decision, appended as the
// log does (budgeted), against the anchor: the same million each written,
// as the log did before (a budget larger than the flood, the noise file
// as large as the trail). Reports the time per attempt both ways and their
// ratio, and the bytes of the audit folder after each; fails if the
// decision's line is gone.
//
//	go test -run '^$' -bench AppendFlood ./app/audit
func BenchmarkAppendFlood(b *testing.B) {
	const n = 1_000_000
	flood := func(budgeted bool) (time.Duration, int64) {
		dir := b.TempDir()
		l := NewLog(dir)
		if !budgeted {
			l.NoiseBudget, l.NoiseMaxSize = math.MaxInt, DefaultMaxSize
		}
		decision := Entry{Time: t0, Server: "nosy", Via: ViaConfinement, Decided: ConfinedOn, Op: "command-line"}
		l.Append(decision)
		began := time.Now()
		for i := range n {
			at := t0.Add(time.Second + time.Duration(i)*time.Minute/n)
			if err := l.Append(attempt(at, "nosy", "", fmt.Sprintf("/home/p/secret/missing-%d", i), ReachIgnored)); err != nil {
				b.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		took := time.Since(began)
		if trail, _ := readFile(filepath.Join(dir, FileName), "", nil); len(trail) == 0 || !trail[0].same(decision) {
			b.Fatalf("the decision is gone: %+v", trail)
		}
		var size int64
		for _, name := range files {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
				size += fi.Size()
			}
		}
		return took, size
	}
	var budgeted, anchor time.Duration
	var bytes, anchorBytes int64
	b.ResetTimer()
	for i := range b.N {
		for _, on := range []bool{i%2 == 0, i%2 != 0} {
			took, size := flood(on)
			if on {
				budgeted, bytes = budgeted+took, size
			} else {
				anchor, anchorBytes = anchor+took, size
			}
		}
	}
	b.StopTimer()
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*n) }
	b.ReportMetric(per(budgeted), "ns/attempt")
	b.ReportMetric(per(anchor), "unbudgeted-ns/attempt")
	b.ReportMetric(float64(budgeted)/float64(anchor), "ratio")
	b.ReportMetric(float64(bytes), "audit-bytes")
	b.ReportMetric(float64(anchorBytes), "unbudgeted-audit-bytes")
}

// BenchmarkAppendAnswers is a grant reaching fifty servers: each is told
// its new list (a line of the trail each), one op per line; allocs/op and
// ns/op are the trail's cost of an answer.
func BenchmarkAppendAnswers(b *testing.B) {
	l := NewLog(b.TempDir())
	defer l.Close()
	lists := [][]string{{"file:///home/p/src/a"}, {"file:///home/p/src/a", "file:///home/p/src/b"}}
	b.ReportAllocs()
	for i := range b.N {
		e := Entry{Time: t0.Add(time.Duration(i) * time.Millisecond), Server: fmt.Sprintf("s%02d", i%50), ProtocolVersion: "2025-06-18",
			Via: ViaRootsList, Roots: lists[(i/50)%2]}
		if err := l.Append(e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFollowFullLog: the window's Activity tab reading the log again
// after one line was added, the log full (both files and their rotated
// generations at their sizes, 36 MB): a Follower, which parses what was
// added, against the anchor, Read, which parses it all (as the tab did).
// Reports each one's ms a read, their ratio, and the log's lines.
func BenchmarkFollowFullLog(b *testing.B) {
	dir := b.TempDir()
	l := NewLog(dir)
	l.NoiseBudget = math.MaxInt
	at := t0
	for i := 0; ; i++ {
		at = at.Add(time.Millisecond)
		l.Append(Entry{Time: at, Server: "fs", Via: ViaRootsList, ProtocolVersion: "2025-06-18",
			Roots: []string{fmt.Sprintf("file:///home/p/src/project-%d", i), "file:///home/p/src/website"}})
		l.Append(attempt(at, "nosy", "", fmt.Sprintf("/home/p/secret/missing-%d", i), ReachIgnored))
		if i%1000 == 0 {
			l.Close()
			if full(b, dir) {
				break
			}
		}
	}
	f := NewFollower(dir)
	all, _, err := f.Entries()
	if err != nil {
		b.Fatal(err)
	}
	var follow, read time.Duration
	for b.Loop() {
		at = at.Add(time.Millisecond)
		if err := l.Append(Entry{Time: at, Server: "fs", Via: ViaRootsList, Roots: []string{"file:///home/p/src/api"}}); err != nil {
			b.Fatal(err)
		}
		l.Close()
		began := time.Now()
		if all, _, err = f.Entries(); err != nil {
			b.Fatal(err)
		}
		follow += time.Since(began)
		began = time.Now()
		again, err := Read(dir, "")
		read += time.Since(began)
		if err != nil || len(again) != len(all) {
			b.Fatalf("Read: %d entries, %v; the follower holds %d", len(again), err, len(all))
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(per(follow), "follow-ms")
	b.ReportMetric(per(read), "read-ms")
	b.ReportMetric(float64(follow)/float64(read), "ratio")
	b.ReportMetric(float64(len(all)), "lines")
	b.ReportMetric(0, "ns/op")
}

// full reports whether every file of the log in dir has its rotated
// generation and is at least half its size limit.
func full(b *testing.B, dir string) bool {
	for _, name := range files {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return false
		}
		if name == NoiseName && fi.Size() < DefaultNoiseMaxSize/2 || name == FileName && fi.Size() < DefaultMaxSize/2 {
			return false
		}
	}
	return true
}
