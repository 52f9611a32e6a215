// Package confine runs a stdio MCP server under a Landlock ruleset (Linux):
// read-write on its visible roots and a private temp folder, read and
// execute on what it needs to run (system folders, its command's install
// folder, the runtime its script names and its version manager, the
// project an npx-style launcher runs in; the launcher's package cache moves
// into the temp folder), and nothing else. Roots are advice a server may
// ignore; a confined server cannot. A protected folder (Rootkeeper's state)
// stays out of reach even inside a root.
//
// Landlock restricts the thread that asks and what it executes; asked from
// Rootkeeper's own process it would confine Rootkeeper. So Wrap rewrites a
// command to start Rootkeeper's own executable with the hidden verb
// __confine; that child (handled in this package's init, before main and
// before any other verb is parsed) restricts its locked thread, sets
// no_new_privs, and execve()s the real server, which inherits the domain.
// Every binary that links Wrap therefore also answers __confine, the test
// binaries included.
//
// The ruleset travels in the environment variable ROOTKEEPER_CONFINE (the
// child removes it before the exec), not on the command line: a command
// line is readable by every local user through /proc/PID/cmdline, and the
// ruleset names the folders the person shares.
//
// github.com/landlock-lsm/go-landlock v0.11.0 was considered: below Landlock
// ABI 8 it restricts every thread of the process through libpsx, which in a
// cgo program (Rootkeeper is one, for Fyne) compiles C into the binary and
// takes over a signal in every thread. One locked thread that execs at once
// needs none of that: the three system calls are made here with
// golang.org/x/sys/unix.
//
// Where Landlock is missing (another OS, an old kernel, disabled at boot)
// Wrap fails with an error that says "cannot confine": a server the person
// asked to confine is then not started at all rather than started
// unconfined (deny by default).
//
// # Seeing the reach (observe_linux.go)
//
// WrapObserved also lets Rootkeeper see each attempt of the server to open,
// create, list, rename or execute a path its ruleset does not cover, so
// that the attempt can be asked about at that moment. The child installs,
// last before the exec, a seccomp filter that sends the path system calls
// (open, openat, openat2, creat, mkdir, mkdirat, rename, renameat,
// renameat2, execve, execveat) to a user-notification listener, and hands
// the listener to Rootkeeper over a unix socket inherited as an extra
// descriptor (made by Rootkeeper, so the child's own filter on unix
// sockets does not apply; sendmsg on it is not filtered). The observer
// reads the path from the server's memory (process_vm_readv), makes it
// absolute against /proc/PID/cwd or /proc/PID/fd/N, and checks that the
// notification is still valid (SECCOMP_IOCTL_NOTIF_ID_VALID) before it
// acts on what it read.
//
// Landlock stays the enforcement. Every call is answered with
// SECCOMP_USER_NOTIF_FLAG_CONTINUE — the kernel then runs it as if the
// filter were not there, and Landlock decides — except where Reach allows
// it once: then Rootkeeper opens the path itself, as asked, with openat2
// beneath the allowed folder (RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS,
// RESOLVE_NO_MAGICLINKS), never in a protected folder, and makes that
// descriptor the call's result (SECCOMP_IOCTL_NOTIF_ADDFD with
// SECCOMP_ADDFD_FLAG_SEND). The path opened is the one read and shown,
// not one the server could change after, with the call's own flags (and
// openat2's resolve flags where they can be repeated beneath the folder:
// all but RESOLVE_IN_ROOT). A mkdir, rename, execute, O_TMPFILE or
// O_PATH open cannot be answered with a descriptor (Attempt.CanHand).
//
// The same filter sends the calls that change a file's mode, owner,
// extended attributes or times, which Landlock does not govern; the
// observer does each itself on the very file the call names, only inside
// the server's read-write folders, and fails it with EPERM elsewhere
// (meta_linux.go). It refuses io_uring_setup and chattr's ioctls outright.
//
// Why a notification per path call, and not only for the denied ones:
// BPF cannot read a path, and a seccomp filter cannot see what Landlock
// will decide, so there is no way to notify only for what Landlock will
// refuse; and a notification that comes after the refusal cannot let the
// call succeed. Paths inside the ruleset are told apart in the observer by
// a prefix check on the ruleset's own paths and continued at once (no
// allocation beyond the path read, no lookup but for paths outside). The
// cost, measured in the same run against the same server confined without
// observation (go test -bench 'Observed|ReachToRequest' ./mcp, -bench
// Opens1000 here; 2 cores shared with other work, so the node figures
// scatter): a notification costs about 6.5 µs (nosy reading 1,000 files
// one after another, its start included: 1.30–1.37×, 19–20 ms against
// 26–27 ms); a start of server-filesystem 0.42–1.02× (medians of 10,
// noise dominates); a read_multiple_files call of 1,000 files inside its
// roots (1,036 notifications) 0.67–1.19× (node opens from a thread pool,
// which hides most of the round trip). A call that opens files back to
// back on one thread pays the 6.5 µs each. The bounds asked for (1.2× on
// a tool call, 1.15× on a start) hold for server-filesystem within the
// noise, so every path call is observed; Options.WithoutReach (mcp,
// bridge) turns observation off.
package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// Policy is what a confined server may reach besides what it needs to run.
type Policy struct {
	// Roots are the folders it may read and write: its visible roots,
	// canonical paths.
	Roots []string
	// Temp is its private temp folder, created (0700) if missing,
	// read-write, and given to it as TMPDIR, TMP and TEMP; the package
	// caches of launchers and runtimes are moved into it (cacheVars).
	Temp string
	// Data is its data folder, kept across starts, read-write even inside
	// a protected folder (Rootkeeper keeps it in its state folder), and
	// given to it as the base of XDG_CONFIG_HOME, XDG_DATA_HOME and
	// XDG_STATE_HOME: where its own settings, logs and data go.
	Data string
	// Own are files and folders of its own outside Data that it is known
	// to keep its state in (a settings folder in the home folder named
	// after it): read-write. A missing one is made (a folder when the
	// path ends in /, else an empty file, mode 0600) so that a rule can
	// name it.
	Own []string
	// Env are variables (KEY=VALUE) it is started with, where its
	// environment does not set them: what points a known server at its
	// data folder (server-memory's MEMORY_FILE_PATH).
	Env []string
	// ReadOnly are more folders or files it may read and execute.
	ReadOnly []string
	// Protect are folders it may neither read nor write even inside one
	// of its Roots: Rootkeeper's state folder, which holds the decisions.
	// Landlock only grants, so a root that holds one is granted as its
	// entries instead (see carve).
	Protect []string
	// Network is NetworkOff for a server that may have no inet socket
	// at all (loopback included); otherwise ("") an observed server gets
	// a network of its own where the kernel allows it (Isolation), and
	// every destination it contacts is told to the observer's Network.
	Network string
	// Upstream are the nameservers Rootkeeper asks for the lookups of a
	// server with a network of its own; nil asks the host's (those its
	// libc asks inside the sandbox, from /etc/resolv.conf).
	Upstream []netip.AddrPort
}

// NetworkOff is Policy.Network for a server with no network.
const NetworkOff = "off"

// ErrUnavailable is wrapped by the errors of Wrap and ABI where Landlock
// cannot be used at all; their text starts with "cannot confine".
var ErrUnavailable = errors.New("cannot confine")

// spec is what the child needs: the real server's executable and the rules.
type spec struct {
	Path  string `json:"path"`
	Rules []rule `json:"rules"`
	// ABI is the Landlock ABI Rootkeeper chose (ABI, with its cap): the
	// child confines at it (or at the kernel's, if lower), whatever its
	// environment says.
	ABI int `json:"abi"`
	// Filter is the system call filter the child installs last
	// (nativeFilter: built once by Rootkeeper, not at every start).
	Filter []byte `json:"filter"`
	// NoInet takes inet sockets away (Policy.Network off): the filter
	// refuses them, and from Landlock ABI 4 Landlock refuses TCP too.
	NoInet bool `json:"noInet,omitempty"`
	// Net, when set, is the network of its own the child makes before it
	// confines itself (netns_linux.go): the child starts in new
	// namespaces (isolate).
	Net *netSpec `json:"net,omitempty"`
	// Notify, when not 0, is the descriptor (a unix socket inherited from
	// Rootkeeper) over which the child sends its seccomp listener before
	// it executes the server (handOverListener, receive_linux.go).
	Notify int `json:"notify,omitempty"`
	// env are variables Wrap sets for the server where its environment
	// does not set them already (not sent to the child).
	env []string
	// direct holds the server's own Path, Args and Env, for a start from
	// a confined thread (not sent to the child).
	direct *exec.Cmd
	// threadFilter is the filter for such a start: as Filter, its execs
	// unseen only where nothing can answer the launch's own exec
	// (filterMode.execUnseen).
	threadFilter []byte
}

// envSpec carries the spec from Wrap to the child.
const envSpec = "ROOTKEEPER_CONFINE"

// verb is the hidden first argument that makes a Rootkeeper binary the
// confining child.
const verb = "__confine"

// Wrap rewrites cmd, not yet started, to start the same server confined by
// p: it runs this executable with the hidden verb __confine, which
// restricts itself and then executes the server. It returns the Landlock
// ABI the ruleset will use. Where Landlock is missing it fails with an
// error wrapping ErrUnavailable and leaves cmd as it was.
func Wrap(cmd *exec.Cmd, p Policy) (int, error) {
	abi, _, _, err := wrap(cmd, p, 0)
	return abi, err
}

// wrap is Wrap; notify is spec.Notify. It returns the spec too, and
// whether the server is to be started confined from a thread of
// Rootkeeper's own (inprocess: an observed server that needs no network
// namespace; see launch_linux.go), in which case cmd is not rewritten.
func wrap(cmd *exec.Cmd, p Policy, notify int) (int, spec, bool, error) {
	abi, err := ABI()
	if err != nil {
		return 0, spec{}, false, err
	}
	self, err := os.Executable()
	if err != nil {
		return 0, spec{}, false, fmt.Errorf("%w: cannot find Rootkeeper's own executable: %v", ErrUnavailable, err)
	}
	if p.Temp != "" {
		if err := os.MkdirAll(p.Temp, 0o700); err != nil {
			return 0, spec{}, false, fmt.Errorf("private temp folder: %w", err)
		}
	}
	if p.Data != "" {
		if err := os.MkdirAll(p.Data, 0o700); err != nil {
			return 0, spec{}, false, fmt.Errorf("data folder: %w", err)
		}
	}
	for _, o := range p.Own {
		if err := makeOwn(o); err != nil {
			return 0, spec{}, false, err
		}
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	s, err := plan(cmd, p, envHome(env))
	if err != nil {
		return 0, spec{}, false, err
	}
	s.Notify = notify
	s.ABI = abi
	s.NoInet = p.Network == NetworkOff
	if notify != 0 && !s.NoInet {
		s.Net = isolateNetwork(cmd)
	}
	if s.Filter, err = nativeFilter(filterMode{abi: abi, observed: notify != 0, noInet: s.NoInet}); err != nil {
		return 0, spec{}, false, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	data, err := json.Marshal(s)
	if err != nil {
		return 0, spec{}, false, err
	}
	env = slices.Clone(env)
	for _, kv := range s.env {
		k, v, _ := strings.Cut(kv, "=")
		if envValue(env, k) == "" {
			env = setEnv(env, k, v)
		}
	}
	env = privateFolders(env, p.Temp, p.Data, envHome(env))
	// The command as it runs from a confined thread of Rootkeeper's
	// (launch_linux.go), kept in the spec; cmd itself is always the
	// re-executing form, so that a caller that starts it as any command
	// still starts it confined.
	s.direct = &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: env}
	cmd.Env = setEnv(env, envSpec, string(data))
	cmd.Args = append([]string{self, verb, "--"}, cmd.Args...)
	cmd.Path = self
	inprocess := notify != 0 && s.Net == nil && launchInProcess
	if inprocess {
		m := filterMode{abi: abi, observed: true, noInet: s.NoInet, execUnseen: !answersFirstExec}
		if s.threadFilter, err = nativeFilter(m); err != nil {
			return 0, spec{}, false, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}
	return abi, s, inprocess, nil
}
