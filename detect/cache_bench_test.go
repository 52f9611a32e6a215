package detect

import (
	"context"
	"os"
	"testing"
)

// The benchmarks scan the tree named by $SCANTREE (bench/scan.sh's tree,
// e.g. SCANTREE=/tmp/scantree made by shared/bench/mktree.py):
//
//	SCANTREE=/tmp/scantree go test -run - -bench Scan -count 5 ./detect
//
// BenchmarkScanFirst is a scan without a cache; BenchmarkScanCached a
// re-scan of the unchanged tree with the cache of an earlier scan (the
// folders reused are reported, and the cache's bytes per folder).
func benchTree(b *testing.B) string {
	dir := os.Getenv("SCANTREE")
	if dir == "" {
		b.Skip("SCANTREE is not set")
	}
	return dir
}

func BenchmarkScanFirst(b *testing.B) {
	req := Request{Dirs: []string{benchTree(b)}}
	for b.Loop() {
		if _, err := (&Scanner{}).Scan(context.Background(), req, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScanCached(b *testing.B) {
	req := Request{Dirs: []string{benchTree(b)}}
	s := &Scanner{Cache: NewCache()}
	if _, err := s.Scan(context.Background(), req, nil, nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.Scan(context.Background(), req, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	st := s.Cache.Stats()
	b.ReportMetric(float64(st.Reused), "reused")
	b.ReportMetric(float64(st.Read), "read")
	b.ReportMetric(float64(st.Bytes)/float64(st.Folders), "cacheB/folder")
}

// BenchmarkScanFirstFilling is a first scan with an empty cache: what
// filling it costs over BenchmarkScanFirst (a stat per folder, the names
// kept).
func BenchmarkScanFirstFilling(b *testing.B) {
	req := Request{Dirs: []string{benchTree(b)}}
	for b.Loop() {
		if _, err := (&Scanner{Cache: NewCache()}).Scan(context.Background(), req, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}
