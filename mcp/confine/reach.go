package confine

// What a confined server reaches for past its ruleset, as the observer
// tells it: a path it named (an Attempt, answered by the Reach given to
// Observer.Start) and a destination it tried to connect to (a Contact,
// decided by the Observer's Network).

import (
	"context"
	"net/netip"
	"syscall"
)

// An Attempt is a path a confined server named in a system call that its
// ruleset does not cover: Landlock will refuse it unless the observer
// hands the server a descriptor.
type Attempt struct {
	PID int
	// Op is what it tried: read, list (open a folder), write (open a file
	// for writing, keeping its content), truncate (empty a file: an open
	// with O_TRUNC, whatever its access, or truncate(2)), create (a file
	// that is not there), replace (create over a file that is there,
	// emptying it), mkdir, rename, execute, watch (inotify).
	Op string
	// Path is the path as the server named it, made absolute against its
	// working folder or the descriptor it used, and cleaned (not resolved).
	Path string
	// CanHand reports whether the call is an open that the observer can
	// answer with a descriptor (allow once); a mkdir, rename or execute
	// cannot be, nor an openat2 whose resolve flags the observer cannot
	// repeat. Why says why not, for the person.
	CanHand bool
	Why     string
	// own marks an open of the caller's own /proc entry (Path, with rest
	// beneath it), which the observer answers itself (procself_linux.go).
	own  bool
	rest string
	// refuse is the error the call fails with when it is not handed a
	// descriptor; 0 lets it go on to Landlock, which refuses it. A call
	// Landlock does not govern (a watch; a truncate below ABI 3) must
	// never go on.
	refuse syscall.Errno
	// answered marks a call the observer has answered already (done in a
	// granted folder).
	answered bool
	// absent marks an attempt that cannot become a question: it neither
	// makes its path nor finds it there (a runtime probing for a file
	// fails with ENOENT whatever is answered). The call goes on at once,
	// and Reach is told afterwards (receive_linux.go: tellLater).
	absent bool
}

// A Contact is a destination a confined server tried to reach: a TCP
// connect past its sandbox, or a connect to a unix socket past its
// read-write folders.
type Contact struct {
	PID int
	// Proto is "tcp" or "unix".
	Proto string
	// Addr is where a TCP connect goes (an IPv4 address unmapped).
	Addr netip.AddrPort
	// Path is the unix socket's file, absolute and cleaned (not resolved).
	Path string
	// Name is the name the server looked up that answered Addr, through
	// Rootkeeper's resolver; "" when it looked up none (or no resolver
	// of Rootkeeper's saw it: a server sharing the host's network).
	Name string
}

// A Network decides where a confined server's sockets may reach.
type Network interface {
	// Contact decides c: true lets it through (Rootkeeper makes the
	// connection). It may wait while a person is asked, until ctx ends.
	Contact(ctx context.Context, c Contact) bool
	// Lookup decides whether a name the server looks up is resolved; one
	// refused is answered REFUSED and never leaves the sandbox.
	Lookup(name string) bool
}

// Reach is told every Attempt. It may block until ctx ends (the observer's
// bound, Observer.Wait), and should return much sooner: a person who cannot
// be asked is not waited for. It returns the folder beneath which the
// observer opens the path for the server itself, with the call's own flags
// (allow once, or a folder allowed while the call waited), or "" to let the
// call go on to Landlock, which refuses it.
//
// An attempt on a path that is not there, by a call that would not make
// it (a read, write, truncate or exec), has nothing to ask about: it is
// told with ctx already done, after the call has gone on (and failed with
// ENOENT, or, should the file have come meanwhile, been refused by
// Landlock), so that its record never holds the server up.
type Reach func(ctx context.Context, a Attempt) (once string)
