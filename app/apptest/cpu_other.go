//go:build !linux

package apptest

import "time"

// SelfCPU is not measured here (benchmarks report 0).
func SelfCPU() time.Duration { return 0 }

// ProcessesCPU is not measured here.
func ProcessesCPU([]int) (time.Duration, bool) { return 0, false }

// SelfRW is not measured here.
func SelfRW() int64 { return 0 }

// SelfWakes is not measured here.
func SelfWakes() int64 { return 0 }

// MonitorCPU is not measured here.
func MonitorCPU() (time.Duration, int64) { return 0, 0 }
