package apptest

import (
	"slices"
	"time"
)

// Percentile is the p-th percentile of d (0.5 the median, 0.99 the tail a
// benchmark reports beside it), by nearest rank below: the value at
// p·(n−1) of d sorted, so that the median of an even count is the lower
// of the two middle values. d is left as it was; it must not be empty.
func Percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

// Median is Percentile(d, 0.5): what a benchmark compares against its
// anchor, since a mean moves with one slow run on a loaded machine.
func Median(d []time.Duration) time.Duration { return Percentile(d, 0.5) }

// Millis is d in milliseconds, fractions kept, for b.ReportMetric.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
