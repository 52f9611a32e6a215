// Package osfile holds what Rootkeeper needs of the operating system's
// files that the standard library does not give the same way everywhere:
// opening a path that may be a FIFO or a device without waiting
// ([OpenNoWait]), a file's device, owner and group/other write bits
// ([DeviceOf], [OwnerOf], [WritableByOthers]), and a lock file held while a
// function runs ([WithLock]). Each is written once per family of systems
// (_unix.go, _other.go), so that callers never carry build tags of their
// own. It knows nothing of Rootkeeper's state.
package osfile
