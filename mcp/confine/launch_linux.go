package confine

// A confined server that needs no network of its own (its network is off,
// or namespaces cannot be made here) is started without re-executing
// Rootkeeper: a goroutine locks itself to an OS thread, puts that thread
// under the server's Landlock ruleset and system call filter (both are
// per thread), and starts the server from it; the child inherits both.
// The thread is never unlocked, so the runtime never runs another
// goroutine on it and ends it when the goroutine returns; threads the
// runtime makes while it is locked come from its clean template thread,
// not from it (runtime.newm). It waits (without reaping: os/exec does)
// for the server to end before it returns, since the kernel sends a
// child's death signal (Pdeathsig) when the thread that made it ends.
//
// Re-executing Rootkeeper to confine itself cost 6-10 ms a start: the
// executable (40 MB, linked to the GUI's libraries) loaded, the runtime
// and some 150 packages initialised, for three system calls.

import (
	"context"
	"errors"
	"os/exec"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// launchInProcess: an observed server that needs no network namespace is
// started from a confined thread (the benchmarks' anchor turns it off).
var launchInProcess = true

// launches are the commands WrapObserved prepared to start in process,
// until Start starts them.
var launches sync.Map // *exec.Cmd -> *Observer

// Start starts cmd: from a confined thread of Rootkeeper's when
// WrapObserved prepared it so, else from the one thread that starts
// servers (spawner_linux.go), so that its death signal means Rootkeeper's
// end and no thread's. The observer is observing when it returns; its
// Start(reach) gives it the Reach, which the attempts that came meanwhile
// wait for.
func Start(cmd *exec.Cmd) error {
	v, ok := launches.LoadAndDelete(cmd)
	if !ok {
		return startOnSpawner(cmd)
	}
	return v.(*Observer).launch(cmd)
}

// Forget drops what WrapObserved prepared for cmd when it will not be
// started after all.
func Forget(cmd *exec.Cmd) { launches.Delete(cmd) }

func (o *Observer) launch(cmd *exec.Cmd) error {
	// The server's own command, not the re-executing form WrapObserved
	// left in cmd; no child hands a listener over.
	d := o.inprocess.direct
	cmd.Path, cmd.Args, cmd.Env = d.Path, d.Args, d.Env
	if n := len(cmd.ExtraFiles); n > 0 && cmd.ExtraFiles[n-1] == o.child {
		cmd.ExtraFiles = cmd.ExtraFiles[:n-1]
	}
	o.parent.Close()
	o.child.Close()
	if err := o.prepare(); err != nil {
		return err
	}
	o.reachSet = make(chan struct{})
	o.listener = make(chan int, 1)
	o.launched = make(chan struct{})
	go o.run(o.waitForReach)
	started := make(chan error, 1)
	go func() {
		// The main thread is never confined: a locked goroutine that
		// ends wedges it rather than ending it (runtime.mexit). On it,
		// the launch goes to a goroutine of its own, which then cannot
		// run here: a locked thread runs its goroutine alone.
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			locked := make(chan struct{})
			go o.launchOnThread(cmd, started, locked)
			<-locked
			runtime.UnlockOSThread()
			return
		}
		o.launchOnThread(cmd, started, nil)
	}()
	return <-started
}

// launchOnThread confines the calling goroutine's thread, which it locks
// for good, and starts cmd from it (see above).
func (o *Observer) launchOnThread(cmd *exec.Cmd, started chan<- error, locked chan<- struct{}) {
	// Never unlocked: this thread is confined from here, and ends with
	// this goroutine.
	runtime.LockOSThread()
	if locked != nil {
		close(locked)
	}
	defer close(o.launched)
	if unix.Gettid() == unix.Getpid() {
		o.listener <- -1
		started <- errors.New("cannot confine the main thread")
		return
	}
	s := o.inprocess
	// Until the server's exec the listener is served by a thread the Go
	// runtime does not stop (answersFirstExec), then by the observer. The
	// thread is made before this one is confined (newLaunchServer).
	var launching *launchServer
	if answersFirstExec {
		var err error
		if launching, err = newLaunchServer(); err != nil {
			o.listener <- -1
			started <- errors.Join(ErrUnavailable, err)
			return
		}
	}
	fd := -1
	err := restrict(s.ABI, s.Rules, s.NoInet)
	if err == nil {
		fd, err = installFilter(s.threadFilter, true)
	}
	if err == nil && launching != nil {
		err = launching.serve(fd)
	}
	if err != nil {
		if launching != nil {
			launching.done()
		}
		if fd >= 0 {
			unix.Close(fd)
		}
		o.listener <- -1
		started <- errors.Join(ErrUnavailable, err)
		return
	}
	if launching == nil {
		o.listener <- fd
	}
	err = cmd.Start()
	if launching != nil {
		launching.done()
		o.listener <- fd
	}
	if err != nil {
		started <- err
		return
	}
	o.root.Store(int32(cmd.Process.Pid))
	started <- nil
	// Outlive the server (its death signal is this thread's), but leave
	// it for os/exec to reap.
	var info unix.Siginfo
	for {
		_, _, e := unix.Syscall6(unix.SYS_WAITID, unix.P_PID, uintptr(cmd.Process.Pid), uintptr(unsafe.Pointer(&info)), unix.WEXITED|unix.WNOWAIT, 0, 0)
		if e != unix.EINTR {
			return
		}
	}
}

// takeListener is the launching thread's listener.
func (o *Observer) takeListener() (int, error) {
	fd := <-o.listener
	if fd < 0 {
		return -1, errors.New("the server's thread could not be confined")
	}
	return fd, nil
}

// waitForReach is the observer's Reach until Start gives it the real one:
// an attempt waits for that (its server just started), within its bound.
func (o *Observer) waitForReach(ctx context.Context, a Attempt) string {
	select {
	case <-o.reachSet:
	case <-ctx.Done():
		return ""
	}
	return o.reach(ctx, a)
}
