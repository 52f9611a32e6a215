//go:build unix && !(linux && (amd64 || arm64))

package filecall

import (
	"path/filepath"
	"syscall"
)

// Calls makes system calls on the files of one folder; here every one is
// made the ordinary way, again when a signal interrupts it.
type Calls struct{}

// In is the Calls for files in the folder dir.
func In(dir string) Calls { return Calls{} }

// For is the Calls for the file at path (In its folder).
func For(path string) Calls { return In(filepath.Dir(path)) }

// Raw reports whether c makes raw calls: never here.
func (Calls) Raw() bool { return false }

// Open is open(2) of path.
func (Calls) Open(path string, flag int, perm uint32) (int, error) {
	return ordinaryN(func() (int, error) { return syscall.Open(path, flag, perm) })
}

// Close is close(2).
func (Calls) Close(fd int) error { return syscall.Close(fd) }

// Fstat is fstat(2).
func (Calls) Fstat(fd int, st *syscall.Stat_t) error {
	return ordinary(func() error { return syscall.Fstat(fd, st) })
}

// Read is read(2) into p.
func (Calls) Read(fd int, p []byte) (int, error) {
	return ordinaryN(func() (int, error) { return syscall.Read(fd, p) })
}

// Getdents reads fd's entries into buf, what syscall.ParseDirent reads.
func (Calls) Getdents(fd int, buf []byte) (int, error) {
	return ordinaryN(func() (int, error) { return syscall.ReadDirent(fd, buf) })
}

// Flock is flock(2).
func (Calls) Flock(fd, how int) error {
	return ordinary(func() error { return syscall.Flock(fd, how) })
}

// Sync is fsync(2), dataOnly or not (fdatasync(2) is not everywhere).
func Sync(fd int, dataOnly bool) error {
	return ordinary(func() error { return syscall.Fsync(fd) })
}
