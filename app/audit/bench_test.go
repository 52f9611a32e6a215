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
