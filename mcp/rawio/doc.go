// Package rawio reads and writes the pipes between Rootkeeper and a server
// (and between a host and the bridge) without waking what need not wake.
//
// A message through a pipe read and written through *os.File the ordinary
// way costs the Go runtime several thread wake-ups: a blocking read keeps a
// P in a system call, so the runtime's monitor thread (sysmon) polls every
// 20 µs; every read and write enters the scheduler's system call path,
// which wakes that monitor from its sleep; and every write to a pollable
// pipe or socket registers for writability, so the network poller wakes
// again when the other side drains it. On a two-core machine that cost the
// bridge 70-120 µs of CPU a call and 5-8 wake-ups (the bridge's
// BenchmarkHeldOutEcho), and each message of a managed server as much.
// Here:
//
//   - what is read (a host's stdin, a server's stdout) is a pollable file
//     read with raw, non-blocking system calls: a goroutine waits in the
//     network poller, one thread wakes when a message comes;
//   - what is written (a server's stdin, a host's stdout) is not
//     registered with the poller: a raw, non-blocking write, which on a
//     full pipe (the other side not reading) waits in poll(2) instead;
//   - this process's own stdin and stdout are never switched to
//     non-blocking mode (another process may share them: a terminal, a
//     shell's pipe): a pipe is opened again through /proc with a
//     description of its own, and a socket is read and written with
//     MSG_DONTWAIT.
//
// A raw system call does not tell the scheduler it runs; each one here
// returns at once (non-blocking), so nothing waits holding a P. Elsewhere
// than Linux the files are used as they are.
package rawio

import "errors"

// ErrWouldBlock is what TryWrite returns when the other side is not
// reading: the rest of what was given is not written.
var ErrWouldBlock = errors.New("the pipe is full")
