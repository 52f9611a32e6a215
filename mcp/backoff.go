package mcp

import (
	"math/rand/v2"
	"time"
)

// backoff is the delay before reconnection attempt number attempt (0 for the
// first retry): min doubled per attempt, capped at max, with equal jitter (a
// random point in the upper half) so that servers failing together do not
// retry in lockstep.
func backoff(min, max time.Duration, attempt int) time.Duration {
	d := max
	if attempt < 32 {
		if s := min << attempt; s > 0 && s < max {
			d = s
		}
	}
	half := d / 2
	return half + rand.N(d-half+1)
}
