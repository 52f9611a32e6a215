//go:build unix

package budget

import (
	"io/fs"
	"syscall"
)

// onDisk is what a file takes on disk: its allocated blocks, so that a
// sparse file claiming a terabyte counts for what it holds.
func onDisk(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return info.Size()
}
