package apptest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// recorder is a testing.TB that records a failure or a skip and ends the
// goroutine as the real ones do; it stands in for the test under test.
type recorder struct {
	testing.TB // nil: only the methods below are called
	failed     string
	skipped    string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}

// as runs f with a recorder on a goroutine of its own, as a test runs.
func as(f func(testing.TB)) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

// Poll looks again and again, its pauses doubling up to Every, until cond
// holds; past Within it fails the test with what it waited for and cond's
// last word. On synctest's clock the looks are counted exactly.
func TestPollBoundAndPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var at []time.Duration
		began := time.Now()
		r := as(func(tb testing.TB) {
			Poll{Within: 5 * time.Second, Every: 100 * time.Millisecond}.Eventually(tb, "the moon", func() (bool, string) {
				at = append(at, time.Since(began))
				return false, fmt.Sprintf("look %d", len(at))
			})
		})
		if !strings.Contains(r.failed, "the moon: not so after 5s (hung?); last seen: look ") {
			t.Fatalf("failure %q", r.failed)
		}
		// 1, 2, 4 … 64 ms, then 100 ms until past 5 s.
		if want := []time.Duration{0, time.Millisecond, 3 * time.Millisecond, 7 * time.Millisecond}; len(at) < 50 || !equal(at[:4], want) {
			t.Fatalf("looks at %v", at)
		}
		for i := 9; i < len(at); i++ {
			if d := at[i] - at[i-1]; d != 100*time.Millisecond {
				t.Fatalf("look %d came %v after the one before, want Every (100ms): %v", i, d, at)
			}
		}
		if last := at[len(at)-1]; last < 5*time.Second || last > 5*time.Second+100*time.Millisecond {
			t.Fatalf("last look at %v, want just past Within (5s)", last)
		}

		n := 0
		r = as(func(tb testing.TB) {
			Eventually(tb, "the third look", func() (bool, string) { n++; return n == 3, "" })
		})
		if r.failed != "" || n != 3 {
			t.Fatalf("Eventually stopped after %d looks (%q), want 3 and no failure", n, r.failed)
		}
		began = time.Now()
		r = as(func(tb testing.TB) { Eventually(tb, "nothing", func() (bool, string) { return false, "" }) })
		if took := time.Since(began); r.failed != "nothing: not so after 30s (hung?)" || took < Patience || took > Patience+50*time.Millisecond {
			t.Fatalf("Eventually gave up after %v with %q, want Patience", took, r.failed)
		}
	})
}

func equal(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Missing skips, but fails under CI, saying why either way.
func TestMissingFailsUnderCI(t *testing.T) {
	for ci, fails := range map[string]bool{"": false, "false": false, "0": false, "true": true, "1": true} {
		t.Setenv("CI", ci)
		r := as(func(tb testing.TB) { Missing(tb, "no tmpfs here") })
		if got := r.failed != ""; got != fails || !strings.Contains(r.failed+r.skipped, "no tmpfs here") {
			t.Errorf("CI=%q: failed %q, skipped %q; want a failure %v", ci, r.failed, r.skipped, fails)
		}
	}
}
