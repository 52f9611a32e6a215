//go:build !unix

package osfile

import "os"

// DeviceOf is unknown here: no device number is reported.
func DeviceOf(os.FileInfo) (uint64, bool) { return 0, false }

// OwnerOf is unknown here.
func OwnerOf(os.FileInfo) (int, bool) { return 0, false }

// WritableByOthers is false: on Windows the mode bits say nothing about who
// may write (Go reports every folder as 0777, so the Unix check refused
// every state folder); the folder's ACL, inherited from the user's profile
// under %AppData%, is what guards it there, and it is not inspected.
func WritableByOthers(os.FileInfo) bool { return false }
