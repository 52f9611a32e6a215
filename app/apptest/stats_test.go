package apptest

import (
	"slices"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	d := []time.Duration{9, 1, 5, 3, 7, 2, 8, 4, 6, 10}
	orig := slices.Clone(d)
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{0, 1}, {0.5, 5}, {0.9, 9}, {0.99, 9}, {1, 10}} {
		if got := Percentile(d, c.p); got != c.want {
			t.Errorf("Percentile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if !slices.Equal(d, orig) {
		t.Errorf("Percentile reordered its input: %v", d)
	}
	if got := Median([]time.Duration{3, 1, 2}); got != 2 {
		t.Errorf("Median of 1,2,3 = %v", got)
	}
}
