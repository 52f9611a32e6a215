//go:build !linux

package mcp

import "time"

// selfCPU is not measured here (the grant benchmark reports 0).
func selfCPU() time.Duration { return 0 }

// processesCPU is not measured here.
func processesCPU([]int) (time.Duration, bool) { return 0, false }

// selfRW is not measured here.
func selfRW() int64 { return 0 }

// selfWakes is not measured here.
func selfWakes() int64 { return 0 }

// monitorCPU is not measured here.
func monitorCPU() (time.Duration, int64) { return 0, 0 }
