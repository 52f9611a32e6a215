//go:build !unix

package budget

import "io/fs"

// onDisk is what a file takes on disk; without block counts, its size.
func onDisk(info fs.FileInfo) int64 { return info.Size() }
