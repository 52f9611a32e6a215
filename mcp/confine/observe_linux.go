package confine

// The observer of a confined server (Observer): made by WrapObserved with
// what its ruleset allows, started once the server is (Start), closed
// when it ends. The loop that receives the calls its filter sends is
// receive_linux.go; how a call is answered, answer_linux.go.

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"rootkeeper/app"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The kinds of path system call (callShape.op).
const (
	opOpen = iota + 1
	opOpen2
	opCreat
	opMkdir
	opRename
	opExec
	opTruncate // truncate(path, length): see answerTruncate
	opWatch    // inotify_add_watch(fd, path, mask): see answerWatch
	// What the observer does itself only in a folder granted while the
	// server runs (grant_linux.go); anywhere else Landlock decides.
	opUnlink
	opRmdir
	opSymlink // the link's path; its target is argument 0
	opLink
)

// callShape says where a path system call keeps its arguments: indexes
// into seccomp_data.args, dirfd -1 for "relative to the working folder",
// path2 0 for "no second path".
type callShape struct {
	op                  int
	dirfd, path, flags  int
	mode, dirfd2, path2 int
}

// Observer watches a confined server's path system calls through a seccomp
// listener. Create it with WrapObserved, Start it once the command has
// started, Close it when done.
type Observer struct {
	parent, child *os.File
	allowed       []string
	listed        []string // folders the ruleset lets it list, and no more
	writable      []string // the read-write part of allowed: metadata may change there
	protect       []string // never handed, whatever Reach says (Policy.Protect, resolved)
	own           []string // its temp and data folders: read-write, even in a protected folder
	abi           int      // the Landlock ABI it is confined at
	// Wait bounds how long an attempt waits for Reach, whatever Reach does
	// (default 3 minutes); Reach itself decides how long a person is
	// waited for.
	Wait time.Duration
	// MaxWaiting bounds the attempts that wait at once (default 64); more
	// are told to Reach with a context already done.
	MaxWaiting int
	// Network decides where its sockets may reach (its contacts, its
	// lookups); nil lets TCP and lookups through, and no unix socket past
	// its folders.
	Network Network

	// sandbox is its network of its own (netns_linux.go), once the child
	// has handed it over; nil where it shares the host's network.
	sandbox  *sandbox
	upstream []netip.AddrPort // Policy.Upstream

	// inprocess is the spec of a server started from a confined thread of
	// Rootkeeper's own (launch_linux.go), nil for one started through the
	// confining child; listener is then that thread's filter's listener,
	// handed to run by launch.
	inprocess *spec
	cmdKey    *exec.Cmd // its entry in launches
	listener  chan int
	reachSet  chan struct{} // closed once Start gave the observer its Reach
	reach     Reach         // set by Start before reachSet is closed
	launched  chan struct{} // closed once the launching thread has started it (or failed)

	// granted are folders granted since it started (Extend: grant_linux.go).
	grantMu sync.RWMutex
	granted []string

	mu      sync.RWMutex // held (read) while the listener is used
	fd      int          // the listener, -1 until received or once closed
	stop    [2]int       // a pipe that wakes the loop to stop
	waiting chan struct{}
	probes  chan Attempt // absent attempts for tellProbes
	// connecting bounds the connects done at once (connect_linux.go).
	connecting chan struct{}
	done       chan struct{}
	closing    sync.Once    // Close's work, done once however often it is called
	handed     atomic.Int64 // descriptors handed to the server (allow once)
	root       atomic.Int32 // the server's first process, once seen
	seen       atomic.Int64 // notifications received
}

// WrapObserved is Wrap, and observes the server: every path system call
// outside its ruleset is told to Start's reach before Landlock decides it.
//
// Where this package has no system call filter for the architecture, the
// server is confined but not observed: the Observer is nil (its methods
// then do nothing).
func WrapObserved(cmd *exec.Cmd, p Policy) (int, *Observer, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, nil, fmt.Errorf("observing the server: %v", err)
	}
	// Rootkeeper's end is non-blocking, so that the runtime polls it and
	// Close wakes a receive that waits; the child's stays blocking.
	unix.SetNonblock(fds[0], true)
	o := &Observer{parent: os.NewFile(uintptr(fds[0]), "seccomp-parent"), child: os.NewFile(uintptr(fds[1]), "seccomp-child"), fd: -1}
	fdInChild := 3 + len(cmd.ExtraFiles)
	abi, s, inprocess, err := wrap(cmd, p, fdInChild)
	if err != nil {
		o.parent.Close()
		o.child.Close()
		return 0, nil, err
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, o.child)
	if inprocess {
		// confine.Start starts it from a confined thread of
		// Rootkeeper's instead (launch_linux.go).
		o.inprocess, o.cmdKey = &s, cmd
		launches.Store(cmd, o)
	}
	o.abi = abi
	o.upstream = p.Upstream
	for _, r := range s.Rules {
		if r.Access == accessList {
			// Listing it is allowed, nothing beneath it: an attempt
			// there is still seen.
			o.listed = append(o.listed, r.Path)
			continue
		}
		// As named, and where Landlock put the rule (it follows links
		// in the path): the kernel names what a descriptor reaches
		// resolved.
		paths := []string{r.Path}
		if !r.Entry {
			if res := app.Resolved(r.Path); res != r.Path {
				paths = append(paths, res)
			}
		}
		o.allowed = append(o.allowed, paths...)
		if r.Access == accessWrite {
			o.writable = append(o.writable, paths...)
		}
	}
	for _, own := range []string{p.Temp, p.Data} {
		if own != "" {
			own = app.Resolved(own)
			o.allowed = append(o.allowed, own)
			o.writable = append(o.writable, own)
			o.own = append(o.own, own)
		}
	}
	for _, pr := range p.Protect {
		if abs, err := filepath.Abs(pr); err == nil && pr != "" {
			o.protect = append(o.protect, abs, app.Resolved(abs))
		}
	}
	return abi, o, nil
}

// Start begins to observe, once the command has started (its copy of the
// socket is then closed here). It returns at once; the listener arrives
// when the child is about to execute the server.
func (o *Observer) Start(reach Reach) error {
	if o == nil {
		return nil
	}
	if o.reachSet != nil {
		// Observing since the launch (confine.Start): the attempts that
		// came meanwhile wait for this Reach.
		o.reach = reach
		close(o.reachSet)
		return nil
	}
	// Started as any command: through the confining child.
	launches.Delete(o.cmdKey)
	o.inprocess = nil
	o.child.Close()
	if err := o.prepare(); err != nil {
		return err
	}
	go o.run(reach)
	return nil
}

// prepare makes what the observing loop needs.
func (o *Observer) prepare() error {
	if o.Wait == 0 {
		o.Wait = 3 * time.Minute
	}
	if o.MaxWaiting == 0 {
		o.MaxWaiting = 64
	}
	if err := unix.Pipe2(o.stop[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	o.waiting = make(chan struct{}, o.MaxWaiting)
	o.probes = make(chan Attempt, maxProbes)
	o.connecting = make(chan struct{}, maxConnecting)
	o.done = make(chan struct{})
	return nil
}

// Close stops observing; calls that wait are let go on to Landlock. It
// may be called again, which does nothing (the stop pipe's descriptors
// are closed by then, their numbers perhaps another file's).
func (o *Observer) Close() {
	if o == nil {
		return
	}
	o.closing.Do(o.close)
}

// close is Close's work: it wakes the loop to stop and waits until it
// has, or closes the socket's ends where no loop ever ran.
func (o *Observer) close() {
	if o.done == nil {
		o.parent.Close()
		o.child.Close()
		return
	}
	unix.Write(o.stop[1], []byte{0})
	o.parent.Close() // wakes a receive that waits for the listener
	<-o.done
}

// Handed is how many descriptors were handed to the server.
func (o *Observer) Handed() int {
	if o == nil {
		return 0
	}
	return int(o.handed.Load())
}

// Seen is how many path system calls of the server were seen.
func (o *Observer) Seen() int {
	if o == nil {
		return 0
	}
	return int(o.seen.Load())
}
