//go:build !linux

// Package reap ends what the servers leave behind; only Linux has child
// subreapers, so elsewhere it does nothing and process groups are all.
package reap

import "time"

// BecomeSubreaper does nothing here.
func BecomeSubreaper() error { return nil }

// Children is unknown here.
func Children() []int { return nil }

// EndOrphans does nothing here.
func EndOrphans(time.Duration) int { return 0 }
