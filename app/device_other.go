//go:build !unix

package app

import "os"

func deviceOf(os.FileInfo) (uint64, bool) { return 0, false }
