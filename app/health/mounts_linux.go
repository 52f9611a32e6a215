package health

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// mountCheckMillis is how often the mount table is read when the kernel has
// not signalled a change.
const mountCheckMillis = 1000

// watchMounts signals changed (without blocking) whenever the mount table
// changes, until ctx ends. fsnotify does not report an unmount of a watched
// folder (it drops IN_UNMOUNT), and an unmounted drive leaves its mount point
// behind, so nothing else would notice. The kernel flags
// /proc/self/mountinfo with POLLPRI on a mount, but (seen on Linux 6.18) not
// always on an unmount, so the table is also compared every second: a read
// of a few kilobytes. It returns an error when it cannot follow the table,
// nil when ctx ends.
func watchMounts(ctx context.Context, changed chan<- struct{}) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	read := func(buf *bytes.Buffer) error {
		buf.Reset()
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := buf.ReadFrom(f)
		return err
	}
	last, cur := new(bytes.Buffer), new(bytes.Buffer)
	if err := read(last); err != nil {
		return fmt.Errorf("reading the mount table: %w", err)
	}
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLPRI}}
	for ctx.Err() == nil {
		fds[0].Revents = 0
		if _, err := unix.Poll(fds, mountCheckMillis); err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("waiting for mount changes: %w", err)
		}
		if err := read(cur); err != nil {
			return fmt.Errorf("reading the mount table: %w", err)
		}
		if bytes.Equal(cur.Bytes(), last.Bytes()) {
			continue
		}
		last, cur = cur, last
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	return nil
}
