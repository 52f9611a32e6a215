package rawio

import (
	"errors"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// errWriterClosed is a write to a closed rawWriter.
var errWriterClosed = errors.New("write to a closed pipe")

// rawReader reads a pollable file with raw non-blocking reads (recv with
// MSG_DONTWAIT for a socket, whose own mode is left blocking), waiting for
// data in the network poller.
type rawReader struct {
	f      *os.File
	rc     syscall.RawConn
	socket bool

	// One read at a time (mu): its buffer and result, and the function
	// the poller calls, made once (a closure made for each read was two
	// allocations a message).
	mu     sync.Mutex
	p      []byte
	n      int
	errno  syscall.Errno
	readFn func(fd uintptr) bool
}

func newRawReader(f *os.File, socket bool) (*rawReader, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	r := &rawReader{f: f, rc: rc, socket: socket}
	r.readFn = r.read
	return r, nil
}

func (r *rawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.p, r.n, r.errno = p, 0, 0
	err := r.rc.Read(r.readFn)
	n, errno := r.n, r.errno
	r.p = nil
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, errno
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// read is one raw non-blocking read into r.p, for the poller (RawConn.Read):
// false when there is nothing to read yet; r.mu is held.
func (r *rawReader) read(fd uintptr) bool {
	p := r.p
	for {
		var m uintptr
		var e syscall.Errno
		if r.socket {
			m, _, e = syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), syscall.MSG_DONTWAIT, 0, 0)
		} else {
			m, _, e = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		}
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait in the poller
		}
		r.n, r.errno = int(m), e
		return true
	}
}

// Interrupts reports whether r is one of this package's readers, whose
// Close ends a Read waiting on it: a read may then wait where its result
// is needed, with no goroutine of its own to hand it over.
func Interrupts(r io.Reader) bool {
	_, ok := r.(*rawReader)
	return ok
}

// Close ends the reader: a Read waiting in the poller returns an error.
func (r *rawReader) Close() error { return r.f.Close() }

// rawWriter writes to a file descriptor with raw non-blocking writes
// (send with MSG_DONTWAIT for a socket, whose own mode is left blocking);
// while the other side does not read, it waits in poll(2).
type rawWriter struct {
	mu     sync.Mutex // held across each write attempt; Close takes it
	fd     int
	socket bool
	owned  bool // Close closes fd
	closed bool
}

// pollWait bounds one wait of a writer whose other side does not read, so
// that it sees a Close.
const pollWait = 500 * time.Millisecond

func (w *rawWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			return n, errWriterClosed
		}
		m, e := w.write(p[n:])
		fd := w.fd
		w.mu.Unlock()
		switch e {
		case 0:
			n += m
		case syscall.EINTR:
		case syscall.EAGAIN:
			// Full: wait, as an ordinary (scheduler-aware) system call.
			unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}, int(pollWait/time.Millisecond))
		default:
			return n, e
		}
	}
	return n, nil
}

// TryWrite writes what it can of p without waiting: all of it, or what
// the pipe took and ErrWouldBlock.
func (w *rawWriter) TryWrite(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for n < len(p) {
		if w.closed {
			return n, errWriterClosed
		}
		m, e := w.write(p[n:])
		switch e {
		case 0:
			n += m
		case syscall.EINTR:
		case syscall.EAGAIN:
			return n, ErrWouldBlock
		default:
			return n, e
		}
	}
	return n, nil
}

// write is one raw write of p; w.mu is held.
func (w *rawWriter) write(p []byte) (int, syscall.Errno) {
	var m uintptr
	var e syscall.Errno
	if w.socket {
		m, _, e = syscall.RawSyscall6(syscall.SYS_SENDTO, uintptr(w.fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), syscall.MSG_DONTWAIT|syscall.MSG_NOSIGNAL, 0, 0)
	} else {
		m, _, e = syscall.RawSyscall(syscall.SYS_WRITE, uintptr(w.fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	}
	return int(m), e
}

// Close ends the writer (and closes its descriptor if it owns it); a write
// waiting for the other side returns within pollWait.
func (w *rawWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.owned {
		return syscall.Close(w.fd)
	}
	return nil
}

// Pipes makes the pipes of a child's stdin and stdout: the ends the child
// gets (ordinary, blocking) and ours (see the package doc). The caller
// closes the child's ends once it has started, and stdin and stdout once
// it is done with them (Wait does not).
func Pipes() (stdin io.WriteCloser, childIn *os.File, stdout io.ReadCloser, childOut *os.File, err error) {
	var in, out [2]int
	if err := syscall.Pipe2(in[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, nil, nil, err
	}
	if err := syscall.Pipe2(out[:], syscall.O_CLOEXEC); err != nil {
		syscall.Close(in[0])
		syscall.Close(in[1])
		return nil, nil, nil, nil, err
	}
	syscall.SetNonblock(in[1], true)
	syscall.SetNonblock(out[0], true)
	r, err := newRawReader(os.NewFile(uintptr(out[0]), "|0"), false)
	if err != nil {
		for _, fd := range []int{in[0], in[1], out[0], out[1]} {
			syscall.Close(fd)
		}
		return nil, nil, nil, nil, err
	}
	w := &rawWriter{fd: in[1], owned: true}
	return w, os.NewFile(uintptr(in[0]), "|0"), r, os.NewFile(uintptr(out[1]), "|1"), nil
}

// Stdio returns how to read in and write out, this process's own stdin and
// stdout (or the like): raw and non-blocking when they are a pipe or a
// socket (see the package doc), as given otherwise. end releases what it
// opened; a read waiting on in then returns an error.
func Stdio(in io.Reader, out io.Writer) (_ io.Reader, _ io.Writer, end func()) {
	var ends []func()
	if f, ok := in.(*os.File); ok {
		if r, err := reader(f); err == nil {
			in = r
			ends = append(ends, func() { r.Close() })
		}
	}
	if f, ok := out.(*os.File); ok {
		if w, err := writer(f); err == nil {
			out = w
			ends = append(ends, func() { w.Close() })
		}
	}
	return in, out, func() {
		for _, end := range ends {
			end()
		}
	}
}

// fileType is the S_IFMT bits of what fd refers to.
func fileType(fd int) (uint32, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return st.Mode & syscall.S_IFMT, nil
}

// errNotPipe is a host side that is neither a pipe nor a socket (a
// terminal, a file): it is used as given.
var errNotPipe = errors.New("neither a pipe nor a socket")

// reader is the stdin f read raw. A pipe is opened again, non-
// blocking; a socket gets a descriptor of its own (a dup) registered with
// the poller while non-blocking for a moment, and is read with
// MSG_DONTWAIT (the poller waits on it whatever its mode).
func reader(f *os.File) (*rawReader, error) {
	fd, t, err := fdOf(f)
	if err != nil {
		return nil, err
	}
	switch t {
	case syscall.S_IFIFO:
		d, err := reopen(fd, syscall.O_RDONLY)
		if err != nil {
			return nil, err
		}
		return newRawReader(os.NewFile(uintptr(d), f.Name()), false)
	case syscall.S_IFSOCK:
		d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		// os.NewFile registers a non-blocking descriptor with the
		// poller; the mode is put back at once, as the stdin may be
		// shared.
		syscall.SetNonblock(d, true)
		g := os.NewFile(uintptr(d), f.Name())
		syscall.SetNonblock(d, false)
		return newRawReader(g, true)
	}
	return nil, errNotPipe
}

// writer is the stdout f written raw: a pipe opened again,
// non-blocking; a socket written with MSG_DONTWAIT.
func writer(f *os.File) (*rawWriter, error) {
	fd, t, err := fdOf(f)
	if err != nil {
		return nil, err
	}
	switch t {
	case syscall.S_IFIFO:
		d, err := reopen(fd, syscall.O_WRONLY)
		if err != nil {
			return nil, err
		}
		return &rawWriter{fd: d, owned: true}, nil
	case syscall.S_IFSOCK:
		return &rawWriter{fd: fd, socket: true}, nil
	}
	return nil, errNotPipe
}

// reopen opens the pipe fd refers to again with a description of its own,
// non-blocking (fd's mode is left as it is).
func reopen(fd, flag int) (int, error) {
	d, err := syscall.Open("/proc/self/fd/"+strconv.Itoa(fd), flag|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if t, err := fileType(d); err != nil || t != syscall.S_IFIFO {
		syscall.Close(d)
		return -1, errNotPipe
	}
	return d, nil
}

// fdOf is f's descriptor and its file type, f's mode left as it is (Fd
// would make a pollable file blocking).
func fdOf(f *os.File) (fd int, typ uint32, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, 0, err
	}
	if cerr := rc.Control(func(d uintptr) { fd = int(d) }); cerr != nil {
		return -1, 0, cerr
	}
	typ, err = fileType(fd)
	return fd, typ, err
}
