package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxABI is the newest Landlock ABI whose rights this package knows. A
// newer kernel is used at this level (Landlock is backward compatible).
const maxABI = 9

// Landlock filesystem rights, and the ABI that introduced each one beyond
// the first thirteen.
const (
	fsExecute     = unix.LANDLOCK_ACCESS_FS_EXECUTE
	fsWriteFile   = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
	fsReadFile    = unix.LANDLOCK_ACCESS_FS_READ_FILE
	fsReadDir     = unix.LANDLOCK_ACCESS_FS_READ_DIR
	fsRefer       = unix.LANDLOCK_ACCESS_FS_REFER        // ABI 2
	fsTruncate    = unix.LANDLOCK_ACCESS_FS_TRUNCATE     // ABI 3
	fsIoctlDev    = unix.LANDLOCK_ACCESS_FS_IOCTL_DEV    // ABI 5
	fsResolveUnix = unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX // ABI 9

	// fileRights are the rights a rule on a file (not a folder) may hold.
	fileRights = fsExecute | fsWriteFile | fsReadFile | fsTruncate | fsIoctlDev
	readRights = fsExecute | fsReadFile | fsReadDir
	// devices are the rights no rule grants: a device node made in a
	// read-write folder (a disk's, by a server running as root) would be
	// opened as a file there, and read the whole disk.
	devices = unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK
)

// handledFS are the filesystem rights Landlock handles at an ABI: all of
// them are denied unless a rule grants them.
func handledFS(abi int) uint64 {
	h := uint64(1)<<13 - 1
	if abi >= 2 {
		h |= fsRefer
	}
	if abi >= 3 {
		h |= fsTruncate
	}
	if abi >= 5 {
		h |= fsIoctlDev
	}
	if abi >= 9 {
		h |= fsResolveUnix
	}
	return h
}

// rulesetAttr is struct landlock_ruleset_attr up to its scoped field (ABI
// 6); the kernel takes a prefix of it, and zeros beyond what it knows.
type rulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

// EnvABI names the environment variable that caps the Landlock ABI
// Rootkeeper confines servers at (1 to the newest this package knows): a
// newer kernel then confines as an older one would, so that what each
// older kernel offers (Debian 12's ABI 2, say) can be tried here. A cap
// at or above the kernel's ABI changes nothing; a value that is not a
// number in that range is refused (ABI fails, without ErrUnavailable, so
// that no server confined by default is then started unconfined).
const EnvABI = "ROOTKEEPER_LANDLOCK_ABI"

// ABI is the Landlock ABI a confined server runs under here: the kernel's
// (KernelABI), capped by EnvABI. Where Landlock is missing the error wraps
// ErrUnavailable and says why.
func ABI() (int, error) {
	abi, err := KernelABI()
	if err != nil {
		return 0, err
	}
	limit, err := abiCap()
	if err != nil {
		return 0, err
	}
	if limit > 0 {
		abi = min(abi, limit)
	}
	return abi, nil
}

// abiCap is EnvABI's value, 0 when it is not set.
func abiCap() (int, error) {
	v, ok := os.LookupEnv(EnvABI)
	if !ok || v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxABI {
		return 0, fmt.Errorf("cannot confine: %s=%q is not a Landlock ABI (1 to %d)", EnvABI, v, maxABI)
	}
	return n, nil
}

// KernelABI is the Landlock ABI this kernel offers, at most the newest
// this package knows, whatever EnvABI says. A kernel whose scoping is
// known broken (no fix in its errata) counts as ABI 5, the last without
// scoping. Where Landlock is missing the error wraps ErrUnavailable and
// says why.
func KernelABI() (int, error) {
	if nativeArch == 0 {
		return 0, fmt.Errorf("%w: Rootkeeper has no system call table for %s", ErrUnavailable, runtime.GOARCH)
	}
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		switch e {
		case unix.ENOSYS:
			return 0, fmt.Errorf("%w: this Linux kernel has no Landlock (5.13 or newer with CONFIG_SECURITY_LANDLOCK is needed)", ErrUnavailable)
		case unix.EOPNOTSUPP:
			return 0, fmt.Errorf("%w: Landlock is disabled on this system (add landlock to the lsm= boot parameter)", ErrUnavailable)
		}
		return 0, fmt.Errorf("%w: Landlock: %v", ErrUnavailable, e)
	}
	abi := min(int(v), maxABI)
	if abi >= 6 {
		errata, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_ERRATA)
		if e != 0 || errata&0x2 == 0 {
			abi = 5
		}
	}
	if abi < 1 {
		return 0, fmt.Errorf("%w: Landlock reports ABI %d", ErrUnavailable, v)
	}
	return abi, nil
}

func init() {
	if len(os.Args) == 2 && os.Args[1] == probeVerb {
		if err := probe(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) < 2 || os.Args[1] != verb {
		return
	}
	// Only the locked main thread is restricted, and only it may exec.
	runtime.LockOSThread()
	err := enter(os.Args[2:])
	fmt.Fprintf(os.Stderr, "rootkeeper: %v\n", err)
	os.Exit(126) // the shell's "cannot execute"
}

// enter is the child: args are "--" and the server's argv. It restricts
// the calling thread and executes the server; it returns only on failure,
// and never executes the server unconfined.
func enter(args []string) error {
	if len(args) < 2 || args[0] != "--" {
		return errors.New("cannot confine the server: usage: rootkeeper __confine -- COMMAND [ARG...]")
	}
	raw, ok := os.LookupEnv(envSpec)
	if !ok {
		return fmt.Errorf("cannot confine the server: no ruleset in %s", envSpec)
	}
	var s spec
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return fmt.Errorf("cannot confine the server: ruleset in %s: %v", envSpec, err)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, envSpec+"=") })
	abi, err := KernelABI()
	if err != nil {
		return err
	}
	if s.ABI < 1 {
		return fmt.Errorf("cannot confine the server: ruleset in %s names no Landlock ABI", envSpec)
	}
	abi = min(abi, s.ABI)
	// Its network, while it may still make one (netns_linux.go): the
	// descriptors Rootkeeper serves it from go over with the listener.
	var netFiles []int
	var netRoles []string
	if s.Net != nil {
		if netFiles, netRoles, err = setUpNetwork(*s.Net); err != nil {
			return fmt.Errorf("cannot confine the server: its network: %w", err)
		}
	}
	if err := restrict(abi, s.Rules, s.NoInet); err != nil {
		return fmt.Errorf("cannot confine the server: %w", err)
	}
	// Last: from here every call the server makes passes the filter, and
	// an observed server's path calls reach Rootkeeper (the exec below
	// included), which answers once it holds the listener.
	if s.ABI != abi {
		// The kernel is older than Rootkeeper found it (a new boot under
		// a running app?): the filter was built for another ABI.
		return fmt.Errorf("cannot confine the server: Landlock ABI %d here, the filter is for %d", abi, s.ABI)
	}
	if s.Notify != 0 {
		err = handOverListener(s.Notify, s.Filter, netFiles, netRoles)
	} else {
		_, err = installFilter(s.Filter, false)
	}
	if err != nil {
		return fmt.Errorf("cannot confine the server: %w", err)
	}
	return fmt.Errorf("confined, but cannot execute %s: %w", s.Path, syscall.Exec(s.Path, args[1:], env))
}

// restrict puts the calling thread under a ruleset of rules at abi:
// everything the ABI handles is denied except what a rule grants. Paths
// that do not exist are skipped. With noInet (its network off), from ABI 4
// Landlock also refuses every TCP bind and connect: no rule grants one.
func restrict(abi int, rules []rule, noInet bool) error {
	handled := handledFS(abi)
	attr := rulesetAttr{handledFS: handled}
	size := unsafe.Sizeof(attr.handledFS)
	if noInet && abi >= 4 {
		attr.handledNet = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		size = unsafe.Offsetof(attr.scoped)
	}
	if abi >= 6 {
		// The server may neither signal processes outside its domain
		// (Rootkeeper, the person's other programs) nor connect to their
		// abstract unix sockets.
		attr.scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		size = unsafe.Sizeof(attr)
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return fmt.Errorf("landlock_create_ruleset: %v", e)
	}
	defer unix.Close(int(fd))
	for _, r := range rules {
		if err := addRule(int(fd), handled, r); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %v", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %v", e)
	}
	return nil
}

// addRule grants r's access beneath r.Path, for the rights handled; a
// file gets only the rights a file can have.
func addRule(fd int, handled uint64, r rule) error {
	flags := unix.O_PATH | unix.O_CLOEXEC
	if r.Entry {
		flags |= unix.O_NOFOLLOW
	}
	pfd, err := unix.Open(r.Path, flags, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ELOOP) {
			return nil // nothing there the server could reach anyway
		}
		return fmt.Errorf("opening %s: %v", r.Path, err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("%s: %v", r.Path, err)
	}
	rights := uint64(readRights)
	switch r.Access {
	case accessWrite:
		rights = handled &^ devices
	case accessList:
		rights = fsReadDir
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
	case unix.S_IFLNK:
		return nil // an entry that became a symlink: not followed
	default:
		rights &= fileRights
	}
	if rights&handled == 0 {
		return nil // listing a file: nothing to grant
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: rights & handled, Parent_fd: int32(pfd)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0); e != 0 {
		return fmt.Errorf("landlock_add_rule %s: %v", r.Path, e)
	}
	return nil
}
