//go:build linux

package apptest

// CPU and scheduling counters of this process and others, for benchmarks that
// report what a piece of work costs beside how long it takes (Linux: from
// getrusage and /proc).

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SelfCPU is the user and system time this process has used.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ProcessesCPU is the user and system time the processes pids have used,
// from /proc; ok says it could read every one.
func ProcessesCPU(pids []int) (_ time.Duration, ok bool) {
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	var sum time.Duration
	for _, pid := range pids {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 0, false
		}
		// Fields after the command's closing parenthesis; utime and stime
		// are the 14th and 15th of the line, the 12th and 13th after it.
		f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(f) > 12 {
			u, _ := strconv.Atoi(f[11])
			s, _ := strconv.Atoi(f[12])
			sum += time.Duration(u+s) * tick
		}
	}
	return sum, true
}

// SelfRW is how many read and write system calls this process has made.
func SelfRW() int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	var n int64
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			c, _ := strconv.ParseInt(v, 10, 64)
			n += c
		}
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			c, _ := strconv.ParseInt(v, 10, 64)
			n += c
		}
	}
	return n
}

// SelfWakes is how many times this process's threads have been put on a
// CPU (schedstat).
func SelfWakes() int64 {
	tasks, _ := filepath.Glob("/proc/self/task/*/schedstat")
	var n int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(data)); len(f) == 3 {
			c, _ := strconv.ParseInt(f[2], 10, 64)
			n += c
		}
	}
	return n
}

// MonitorCPU is the run time and the times put on a CPU of the Go
// runtime's monitor thread (sysmon), from its schedstat: the first thread
// the runtime starts, so the lowest thread id after the process's own.
func MonitorCPU() (time.Duration, int64) {
	tasks, _ := os.ReadDir("/proc/self/task")
	self, first := os.Getpid(), 0
	for _, t := range tasks {
		if id, err := strconv.Atoi(t.Name()); err == nil && id > self && (first == 0 || id < first) {
			first = id
		}
	}
	data, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(first) + "/schedstat")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(data))
	if len(f) != 3 {
		return 0, 0
	}
	ns, _ := strconv.ParseInt(f[0], 10, 64)
	slices, _ := strconv.ParseInt(f[2], 10, 64)
	return time.Duration(ns), slices
}
