//go:build !unix

package app

import "os"

func deviceOf(os.FileInfo) (uint64, bool) { return 0, false }

// ownerOf is unknown here.
func ownerOf(os.FileInfo) (int, bool) { return 0, false }

// writableByOthers is false: on Windows the mode bits say nothing about who
// may write (Go reports every folder as 0777, so the Unix check refused
// every state folder); the folder's ACL, inherited from the user's profile
// under %AppData%, is what guards it there, and it is not inspected.
func writableByOthers(os.FileInfo) bool { return false }
