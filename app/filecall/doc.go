// Package filecall makes the system calls Rootkeeper reads and writes its
// own files with (the state file, its lock, its spare, their folder, the
// audit trail), so that a save does not wake the Go runtime's monitor
// thread.
//
// A system call made the ordinary way (package syscall, os) tells the
// scheduler that its thread may block; when the process was idle, that
// wakes the runtime's monitor thread (sysmon), which then polls every
// 20 µs for a millisecond and backs off over the next few: 25-30 wakes
// and 0.15-0.2 ms of CPU for every save, whatever the save itself costs
// (BenchmarkGrantToServer's sysmon-wakes). So here:
//
//   - Calls that return at once on a local disk (open, stat, read,
//     write, close, getdents, rename, a lease, a lock nobody holds) are
//     made raw, without telling the scheduler, but only on a folder whose
//     file system is local (ext4, xfs, btrfs, tmpfs, ...: [In] asks
//     statfs once per folder). On a network or FUSE file system any call
//     may wait on a server, and a raw call that waits holds its P: a
//     garbage collection would wait for it, and with it the window. There
//     every call goes through the scheduler as before.
//   - A lock that another process holds is waited for through the
//     scheduler: only the first try, which does not wait, is raw.
//   - fsync and fdatasync wait for the disk wherever the folder is. [Sync]
//     hands them to the kernel (Linux AIO: IOCB_CMD_FSYNC, IOCB_CMD_FDSYNC,
//     done by a kernel worker) and waits for the answer in Go's network
//     poller (an eventfd), so no thread of Rootkeeper's is held and the
//     scheduler is never told. Where AIO is refused (a kernel before 4.18,
//     a sandbox without io_submit), the sync is made the ordinary way.
//
// Raw calls are made on Linux amd64 and arm64; elsewhere every call is the
// ordinary one.
package filecall
