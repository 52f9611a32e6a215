//go:build !linux

package health

import "context"

// watchMounts does nothing here: unmounts are found by the checks that events,
// polling and wake-ups cause.
func watchMounts(context.Context, chan<- struct{}) error { return nil }
