// Package supervise keeps the long-running loops of the app going: each runs
// under Run, which restarts it with backoff whenever it stops before its
// context ends, or panics, and reports the failure so that the person sees
// it (a dead health monitor would otherwise leave a deleted folder "ok").
//
// The split follows the app's style: the loop is an inner function that
// returns a wrapped error; Run is the outer loop that reports, backs off and
// retries. Only main ends the process.
package supervise

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Options tune Run. Zero fields take the defaults.
type Options struct {
	// Min and Max bound the backoff between restarts (defaults 500 ms, 30 s);
	// it doubles with each failure in a row, with jitter.
	Min, Max time.Duration
	// Healthy is how long a restarted loop must run before it counts as
	// recovered: OnRecover is called and the backoff starts again from Min
	// (default 10 s).
	Healthy time.Duration
	// OnFail is told of each failure: the error (a panic becomes one), how
	// many failures in a row, and the delay before the next start.
	OnFail func(err error, failures int, next time.Duration)
	// OnRecover is called once a loop that failed has run for Healthy.
	OnRecover func()
}

// Run runs loop until ctx ends, restarting it after it returns (with an
// error, or nil while ctx is still going: a loop that ends by itself has
// stopped doing its job) or panics.
func Run(ctx context.Context, loop func(context.Context) error, opts Options) {
	if opts.Min <= 0 {
		opts.Min = 500 * time.Millisecond
	}
	if opts.Max <= 0 {
		opts.Max = 30 * time.Second
	}
	if opts.Healthy <= 0 {
		opts.Healthy = 10 * time.Second
	}
	failures := 0
	for {
		// A restarted loop that keeps running for Healthy has recovered:
		// say so while it runs, and count its next failure as a first.
		var healthy atomic.Bool
		var timer *time.Timer
		if failures > 0 {
			timer = time.AfterFunc(opts.Healthy, func() {
				healthy.Store(true)
				if opts.OnRecover != nil {
					opts.OnRecover()
				}
			})
		}
		err := runOnce(ctx, loop)
		if timer != nil {
			timer.Stop()
		}
		if healthy.Load() {
			failures = 0
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = fmt.Errorf("stopped by itself")
		}
		delay := Backoff(opts.Min, opts.Max, failures)
		failures++
		if opts.OnFail != nil {
			opts.OnFail(err, failures, delay)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// runOnce runs loop, turning a panic into an error.
func runOnce(ctx context.Context, loop func(context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return loop(ctx)
}

// Backoff is the delay before retry number attempt (0 for the first): min
// doubled per attempt, capped at max, with equal jitter (a random point in
// the upper half) so that things failing together do not retry in
// lockstep.
func Backoff(min, max time.Duration, attempt int) time.Duration {
	d := max
	if attempt < 32 {
		if s := min << attempt; s > 0 && s < max {
			d = s
		}
	}
	half := d / 2
	return half + rand.N(d-half+1)
}
