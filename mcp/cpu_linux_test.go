package mcp

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// selfCPU is the user and system time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processesCPU is the user and system time the processes pids have used,
// from /proc; ok says it could read every one.
func processesCPU(pids []int) (_ time.Duration, ok bool) {
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
