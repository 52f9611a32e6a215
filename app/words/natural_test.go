package words

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestCompareNatural(t *testing.T) {
	ordered := []string{
		"/home/p/project-1",
		"/home/p/project-2",
		"/home/p/project-2b",
		"/home/p/project-10",
		"/home/p/project-10/a",
		"/home/p/project-010x", // the same number written longer sorts after
		"/home/p/project-99999999999999999999999",
		"/home/p/project-100000000000000000000000",
		"/home/p/projectA",
		"/home/p/projects",
	}
	for i := range ordered {
		for j := range ordered {
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got := CompareNatural(ordered[i], ordered[j]); got != want {
				t.Errorf("CompareNatural(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	shuffled := slices.Clone(ordered)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	slices.SortFunc(shuffled, CompareNatural)
	if !slices.Equal(shuffled, ordered) {
		t.Errorf("sorted:\n%q\nwant\n%q", shuffled, ordered)
	}
	if CompareNatural("007", "7") == 0 || CompareNatural("7", "007") == 0 {
		t.Error("007 and 7 compare equal: the order would not be total")
	}
}
