package hosts

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

func running(names []string) bool {
	if len(names) == 0 {
		return false
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	self := os.Getpid()
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		args := bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
		// The program, and for a runtime (node …/bin/claude) the script
		// it runs.
		for i, a := range args {
			if i > 1 {
				break
			}
			if slices.Contains(names, filepath.Base(string(a))) {
				return true
			}
		}
	}
	return false
}
