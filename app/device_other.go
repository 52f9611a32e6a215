//go:build !unix

package app

import "os"

func deviceOf(os.FileInfo) (uint64, bool) { return 0, false }

// ownerOf is unknown here.
func ownerOf(os.FileInfo) (int, bool) { return 0, false }
