package confine

import "sync"

// The system calls a confined server may make: one reviewed table, every
// call of x86-64 and arm64 in it (sysnums.go lists them, generated from
// golang.org/x/sys), each with what covers it. The seccomp filter
// (filter.go) is built from this table for the server's architecture, the
// Landlock ABI it runs at and whether Rootkeeper observes it:
//
//   - a call that is in no row, a number no kernel had when the table was
//     written included, fails with ENOSYS, as on a kernel without it (libc
//     and runtimes then fall back to an older call, as they do from
//     clone3 or openat2);
//   - a call refused on purpose fails with EPERM;
//   - a call through another ABI than the native one (i386 or x32 on
//     x86-64, AArch32 on arm64), whose numbers and argument layouts are
//     not these, fails with EPERM, at every Landlock ABI.
//
// What covers a call is one of the classes below. Where Landlock lacks a
// right at the running ABI the row says what covers it instead:
// truncating (Landlock ABI 3) is watched by the observer and refused by
// the filter below it; ioctl (ABI 5 governs device ioctls only, and never
// descriptors the server inherited) passes only a list of commands at
// every ABI; unix sockets (ABI 9) are checked by the observer below it.
// Signals (scoped from ABI 6) are the one right left to the kernel's
// ordinary checks below its ABI, and the window says so
// (app.ConfinedText).

// What covers a call (sysRule.class), for the reader of the table.
const (
	// classDescriptor: it works on descriptors the server holds; what a
	// descriptor reaches was decided when it was opened (by Landlock, or
	// by the person for one the observer handed).
	classDescriptor = "descriptor"
	// classLandlock: it names a path, and Landlock governs it at every
	// ABI; an observed server's call is also told to the observer, which
	// asks about a path past its folders.
	classLandlock = "landlock"
	// classObserved: Landlock does not govern it; the observer does it
	// itself where the server may (its read-write folders) and refuses it
	// elsewhere. Unobserved, it is refused.
	classObserved = "observed"
	// classProcess: it touches only the server's own memory, threads,
	// time and scheduling, or processes of its own Landlock domain (which
	// Landlock's ptrace rules keep it to).
	classProcess = "process"
	// classInfo: it tells without changing anything (stat, access,
	// getxattr, uname): a confined server may learn that a path exists
	// and its size and times, never its content (docs/confinement.md says so).
	classInfo = "info"
	// classNetwork: sockets. The network itself is not confined yet;
	// unix sockets and socket families are (see the checks).
	classNetwork = "network"
	// classRefused: nothing an MCP server needs, and a way past the
	// boundary or into the system (mounts, modules, keyrings, kernel
	// tracing, io_uring, namespaces of other programs): EPERM.
	classRefused = "refused"
	// classGone: obsolete or never implemented on these architectures:
	// ENOSYS, as the kernel answers.
	classGone = "gone"
)

// A filterMode is what a filter is built for.
type filterMode struct {
	// abi is the Landlock ABI the server is confined at.
	abi int
	// observed: Rootkeeper holds the filter's listener and answers what
	// the table sends to it; without, those calls are refused.
	observed bool
	// noInet: the server may have no inet socket (Policy.Network off).
	noInet bool
	// execUnseen: an observed server started from a confined thread of
	// Rootkeeper's (launch_linux.go) runs its programs unasked, Landlock
	// alone deciding, in a build without cgo. Its first execve, the
	// server's own, is made by a vfork child while the launching thread
	// holds its place in the Go runtime: a stop-the-world that began
	// meanwhile would wait for that thread while the observer, were it to
	// answer the execve, is stopped. With cgo a thread of C answers it
	// (firstexec_cgo_linux.go); without, the execs go unseen. An exec
	// cannot be handed once anyway: the observer only asks, to offer a
	// lasting grant.
	execUnseen bool
}

// An action is what the filter does with one call: a seccomp return
// value, or an argument check (checks) that decides.
type action struct {
	ret   uint32
	check string
}

// Seccomp return values and the errnos the filter answers with (the same
// numbers on x86-64 and arm64).
const (
	retAllow  uint32 = 0x7fff0000 // SECCOMP_RET_ALLOW
	retNotify uint32 = 0x7fc00000 // SECCOMP_RET_USER_NOTIF
	retErrno  uint32 = 0x00050000 // SECCOMP_RET_ERRNO, with the errno in the low 16 bits

	errPERM        = 1
	errACCES       = 13
	errNOTTY       = 25
	errNOSYS       = 38
	errPROTONOSUPP = 93
	errAFNOSUPPORT = 97
	errOPNOTSUPP   = 95
	errnoMask      = 0xffff
	retActionMask  = 0xffff0000
	x32Bit         = 0x40000000 // set in an x32 call's number on x86-64
	archX86_64     = 0xc000003e // AUDIT_ARCH_X86_64
	archAArch64    = 0xc00000b7 // AUDIT_ARCH_AARCH64
)

// unixSocketABI is the first Landlock ABI that confines connecting to
// named unix sockets (LANDLOCK_ACCESS_FS_RESOLVE_UNIX). Below it a
// Landlocked server could connect to any named unix socket it can name
// (the app's control socket, the D-Bus session bus, an SSH or GPG agent),
// so there the filter gives an observed server stream unix sockets whose
// every connect the observer checks, and an unobserved one none.
const unixSocketABI = 9 // app.UnixSocketABI

var (
	allowed  = action{ret: retAllow}
	notified = action{ret: retNotify}
	refused  = action{ret: retErrno | errPERM}
	gone     = action{ret: retErrno | errNOSYS}
)

func errno(e uint32) action { return action{ret: retErrno | e} }

// always is a row's action whatever the mode.
func always(a action) func(filterMode) action { return func(filterMode) action { return a } }

// observedElse sends the call to the observer, or, unobserved, does a.
// execAction: an exec is notified where the server is observed and its
// first exec can be answered.
func execAction(m filterMode) action {
	if m.observed && !m.execUnseen {
		return notified
	}
	return allowed
}

func observedElse(a action) func(filterMode) action {
	return func(m filterMode) action {
		if m.observed {
			return notified
		}
		return a
	}
}

// A sysRule is one row of the table: calls that are answered alike.
type sysRule struct {
	calls []string
	class string
	why   string
	act   func(filterMode) action
}

// syscallTable is the table. Every call named in sysnums for x86-64 or
// arm64 is in exactly one row (TestEveryCallIsReviewed).
var syscallTable = []sysRule{
	// Descriptors it holds.
	{calls: []string{"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
		"lseek", "close", "close_range", "dup", "dup2", "dup3", "pipe", "pipe2", "fcntl", "flock",
		"fsync", "fdatasync", "sync_file_range", "syncfs", "sync", "ftruncate", "fallocate", "fadvise64", "readahead",
		"sendfile", "splice", "tee", "vmsplice", "copy_file_range", "getdents", "getdents64",
		"poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2",
		"eventfd", "eventfd2", "signalfd", "signalfd4", "timerfd_create", "timerfd_settime", "timerfd_gettime",
		"inotify_init", "inotify_init1", "inotify_rm_watch", "memfd_create", "memfd_secret",
		"io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents", "cachestat"},
		class: classDescriptor, act: always(allowed),
		why: "reads, writes, waits on and copies between descriptors it already holds; a descriptor reaches only what was decided when it was opened (Linux AIO does the same reads and writes)"},

	// Paths Landlock governs at every ABI.
	{calls: []string{"open", "openat"}, class: classLandlock, act: openAction,
		why: "Landlock decides read, write and create; an observed server's open past its folders is asked about. Below ABI 3 Landlock does not govern truncation and an open for reading with O_TRUNC empties a file it may only read: the filter refuses O_TRUNC without write access there (EACCES)"},
	{calls: []string{"openat2"}, class: classLandlock, act: openat2Action,
		why: "as openat; its flags are in memory the filter cannot read, so below ABI 3 (see open) it fails with ENOSYS and libc uses openat"},
	{calls: []string{"creat", "mkdir", "mkdirat", "rename", "renameat", "renameat2"}, class: classLandlock, act: observedElse(allowed),
		why: "Landlock decides; an observed server's call past its folders is asked about"},
	{calls: []string{"execve", "execveat"}, class: classLandlock, act: execAction,
		why: "Landlock decides; an observed server's program past its folders is asked about (started from a thread of Rootkeeper's, its own exec is answered by a thread the Go runtime does not stop; a build without cgo has none, and there its programs run unseen: filterMode.execUnseen)"},
	{calls: []string{"link", "linkat", "symlink", "symlinkat", "unlink", "unlinkat", "rmdir"}, class: classLandlock, act: observedElse(allowed),
		why: "Landlock decides (make and remove rights; a link needs refer from ABI 2 and cannot cross folders at ABI 1); an observed server's call in a folder granted while it runs is done by the observer"},
	{calls: []string{"mknod", "mknodat"}, class: classLandlock, act: always(allowed),
		why: "Landlock decides: devices cannot be made (no rule grants the right to make a character or block device), FIFOs and sockets only in its read-write folders"},
	{calls: []string{"chdir", "fchdir", "getcwd"}, class: classLandlock, act: always(allowed),
		why: "moving its working folder reaches nothing: every open from it is decided by Landlock"},
	{calls: []string{"truncate"}, class: classLandlock, act: truncateAction,
		why: "Landlock decides from ABI 3; below it the observer truncates only in its read-write folders (the same file it checked) and refuses elsewhere, and unobserved it is refused (EPERM)"},

	// What Landlock does not govern: done or refused by the observer.
	{calls: []string{"chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
		"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
		"utime", "utimes", "futimesat", "utimensat"}, class: classObserved, act: observedElse(refused),
		why: "Landlock does not govern a file's mode, owner, extended attributes or times: the observer does the call itself on the very file it names, in its read-write folders only (meta_linux.go)"},
	{calls: []string{"setxattrat", "removexattrat"}, class: classObserved, act: always(gone),
		why: "newer forms of setxattr and removexattr (Linux 6.13) with their arguments in a structure: ENOSYS, and libc falls back to the forms above"},
	{calls: []string{"inotify_add_watch"}, class: classObserved, act: observedElse(refused),
		why: "a watch tells the names saved in a folder and Landlock does not govern it: the observer adds it itself, on the folder it checked, only inside its folders (watch_linux.go)"},

	// What it may learn without reading.
	{calls: []string{"stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2",
		"readlink", "readlinkat", "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr",
		"getxattrat", "listxattrat", "file_getattr", "statmount", "listmount", "listns", "uname", "sysinfo", "getcpu",
		"lsm_get_self_attr", "lsm_list_modules"},
		class: classInfo, act: always(allowed),
		why: "tells that a path exists, its size, times, mode and attributes, or facts of the system, changing nothing; Landlock governs content, not names (docs/confinement.md: what the boundary is made of)"},

	// Its own process.
	{calls: []string{"mmap", "munmap", "mprotect", "mremap", "msync", "mincore", "madvise", "brk", "mlock", "mlock2", "munlock",
		"mlockall", "munlockall", "remap_file_pages", "mbind", "set_mempolicy", "get_mempolicy", "set_mempolicy_home_node",
		"migrate_pages", "move_pages", "pkey_mprotect", "pkey_alloc", "pkey_free", "membarrier", "mseal", "map_shadow_stack",
		"process_madvise", "process_mrelease"},
		class: classProcess, act: always(allowed),
		why: "its own memory (another process's only where Landlock's ptrace rules let it: its own domain)"},
	{calls: []string{"clone", "clone3", "fork", "vfork", "exit", "exit_group", "wait4", "waitid", "getpid", "getppid", "gettid",
		"set_tid_address", "set_robust_list", "get_robust_list", "rseq", "rseq_slice_yield", "restart_syscall", "pause",
		"arch_prctl", "prctl", "personality", "set_thread_area", "get_thread_area", "uretprobe", "uprobe",
		"futex", "futex_waitv", "futex_wake", "futex_wait", "futex_requeue", "getrandom", "unshare",
		"setsid", "setpgid", "getpgid", "getpgrp", "getsid", "getrlimit", "setrlimit", "prlimit64", "getrusage", "times",
		"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups", "setuid", "setgid", "setreuid", "setregid",
		"setresuid", "setresgid", "setfsuid", "setfsgid", "setgroups", "capget", "capset", "umask"},
		class: classProcess, act: always(allowed),
		why: "threads, children (which inherit the domain and the filter), its identity; a new namespace keeps the domain, and Landlock refuses mounts in it"},
	{calls: []string{"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd", "kcmp"}, class: classProcess, act: always(allowed),
		why: "Landlock lets a confined process trace only processes of its own domain (ABI 1); a tracer under seccomp cannot suspend a tracee's filter"},
	{calls: []string{"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"}, class: classProcess, act: always(allowed),
		why: "it may confine itself further, never less"},
	{calls: []string{"seccomp"}, class: classProcess, act: always(action{check: checkSeccomp}),
		why: "a filter of its own is only stricter, except one with a listener of its own: the newest listener is told a call first and could let a call the observer must see go on, so SECCOMP_FILTER_FLAG_NEW_LISTENER is refused (EPERM)"},
	{calls: []string{"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait", "rt_sigsuspend", "sigaltstack"},
		class: classProcess, act: always(allowed), why: "its own signal handling"},
	{calls: []string{"kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal"}, class: classProcess, act: always(allowed),
		why: "Landlock scopes signals to its domain from ABI 6; below, the kernel's own check lets it signal the person's other programs, and the window says so"},
	{calls: []string{"sched_yield", "sched_setparam", "sched_getparam", "sched_setscheduler", "sched_getscheduler",
		"sched_get_priority_max", "sched_get_priority_min", "sched_rr_get_interval", "sched_setaffinity", "sched_getaffinity",
		"sched_setattr", "sched_getattr", "getpriority", "setpriority", "ioprio_set", "ioprio_get"},
		class: classProcess, act: always(allowed), why: "scheduling, within the kernel's own checks"},
	{calls: []string{"gettimeofday", "time", "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "alarm", "getitimer",
		"setitimer", "timer_create", "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete"},
		class: classProcess, act: always(allowed), why: "reading the clocks and its own timers"},

	// Sockets.
	{calls: []string{"socket"}, class: classNetwork, act: always(action{check: checkSocket}),
		why: "unix, IPv4, IPv6 and netlink route sockets only (EAFNOSUPPORT for other families, EPROTONOSUPPORT for other netlink protocols), no IPv4 or IPv6 at all for a server whose network is off (EACCES); below Landlock ABI 9 unix sockets are stream or seqpacket ones whose every connect the observer checks, none at all unobserved (EACCES)"},
	{calls: []string{"socketpair"}, class: classNetwork, act: always(action{check: checkSocketpair}),
		why: "a connected pair reaches only its peer; below ABI 9 not a datagram pair, which may send to any named socket (EACCES)"},
	{calls: []string{"connect"}, class: classNetwork, act: observedElse(allowed),
		why: "the observer does every connect itself: a unix one to a socket file in its read-write folders or a destination allowed, an inet one to a destination allowed (where it has a network of its own, on a socket of the host's network handed in place of its own, or relayed from outside its sandbox)"},
	{calls: []string{"sendto", "sendmsg", "sendmmsg"}, class: classNetwork, act: always(action{check: checkSendFlags}),
		why: "on sockets it holds, but MSG_FASTOPEN would connect a TCP socket without connect: refused (EOPNOTSUPP), and the connect is made instead"},
	{calls: []string{"accept", "accept4", "bind", "listen", "getsockname", "getpeername", "setsockopt", "getsockopt",
		"recvfrom", "recvmsg", "recvmmsg", "shutdown"},
		class: classNetwork, act: always(allowed),
		why: "on sockets it holds: a unix datagram socket, which could send to any name, is not made below ABI 9, and Landlock governs named ones from ABI 9 (binding makes a socket file: Landlock's make rights)"},
	{calls: []string{"ioctl"}, class: classDescriptor, act: always(action{check: checkIoctl}),
		why: "on a descriptor, but an ioctl can do anything a driver offers, and Landlock governs device ioctls only from ABI 5 and never on inherited descriptors: the commands listed in ioctlAllowed pass, those in ioctlRefused fail with EPERM (attribute flags, the inode's version, typing into a terminal), any other fails with ENOTTY"},

	// Refused.
	{calls: []string{"mount", "umount2", "pivot_root", "chroot", "open_tree", "open_tree_attr", "move_mount", "fsopen", "fsconfig",
		"fsmount", "fspick", "mount_setattr", "setns"}, class: classRefused, act: always(refused),
		why: "mounts and other programs' namespaces change what a path names"},
	{calls: []string{"name_to_handle_at", "open_by_handle_at"}, class: classRefused, act: always(refused),
		why: "opening by file handle skips the path walk"},
	{calls: []string{"file_setattr"}, class: classRefused, act: always(refused),
		why: "sets a file's attribute flags by path (immutable, append-only, no-dump, no-atime: Linux 6.17), which Landlock does not govern; chattr's ioctls are refused too"},
	{calls: []string{"quotactl", "quotactl_fd"}, class: classRefused, act: always(refused), why: "disk quotas are the system's"},
	{calls: []string{"fanotify_init", "fanotify_mark"}, class: classRefused, act: always(refused),
		why: "fanotify watches whole mounts and filesystems, past any folder"},
	{calls: []string{"io_uring_setup", "io_uring_enter", "io_uring_register"}, class: classRefused, act: always(refused),
		why: "io_uring opens files, makes sockets and sets attributes without these system calls, out of the filter's sight"},
	{calls: []string{"bpf", "perf_event_open", "userfaultfd", "lookup_dcookie", "syslog"}, class: classRefused, act: always(refused),
		why: "kernel tracing, programs and logs: the system's, and ways into the kernel"},
	{calls: []string{"keyctl", "add_key", "request_key"}, class: classRefused, act: always(refused),
		why: "the kernel keyrings hold the person's keys and tickets, which Landlock does not govern"},
	{calls: []string{"shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semctl", "semtimedop",
		"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr"},
		class: classRefused, act: always(refused),
		why: "System V IPC and POSIX message queues reach other programs' shared memory and queues by key or name, which Landlock does not govern"},
	{calls: []string{"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff",
		"acct", "vhangup", "sethostname", "setdomainname", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
		"iopl", "ioperm", "modify_ldt", "lsm_set_self_attr"},
		class: classRefused, act: always(refused),
		why: "the system's: its kernel, clock, names, hardware ports and security modules"},
	{calls: []string{"uselib", "ustat", "sysfs", "_sysctl", "create_module", "get_kernel_syms", "query_module", "nfsservctl",
		"getpmsg", "putpmsg", "afs_syscall", "tuxcall", "security", "vserver", "epoll_ctl_old", "epoll_wait_old"},
		class: classGone, act: always(gone), why: "obsolete, or never implemented: the kernel answers ENOSYS"},
}

// openAction: see its row.
func openAction(m filterMode) action {
	if m.abi < 3 {
		return action{check: checkOpenTrunc}
	}
	return observedElse(allowed)(m)
}

// openat2Action: see its row.
func openat2Action(m filterMode) action {
	if m.abi < 3 {
		return gone
	}
	return observedElse(allowed)(m)
}

// truncateAction: see its row.
func truncateAction(m filterMode) action {
	switch {
	case m.observed:
		return notified
	case m.abi < 3:
		return refused
	}
	return allowed
}

// The argument checks (action.check); filter.go writes each.
const (
	checkOpenTrunc  = "open-trunc"
	checkSocket     = "socket"
	checkSocketpair = "socketpair"
	checkSeccomp    = "seccomp"
	checkIoctl      = "ioctl"
	checkSendFlags  = "send-flags"
)

// ioctlAllowed are the ioctl commands a confined server may use (the
// 32-bit command, the same on x86-64 and arm64): terminals' settings and
// sizes, descriptors' flags, what is queued, interfaces' names and
// addresses, a file's flags and extents read, and cloning ranges between
// files it holds.
var ioctlAllowed = map[uint32]string{
	0x5401: "TCGETS", 0x5402: "TCSETS", 0x5403: "TCSETSW", 0x5404: "TCSETSF",
	0x802c542a: "TCGETS2", 0x402c542b: "TCSETS2", 0x402c542c: "TCSETSW2", 0x402c542d: "TCSETSF2",
	0x5405: "TCGETA", 0x5406: "TCSETA", 0x5407: "TCSETAW", 0x5408: "TCSETAF",
	0x5409: "TCSBRK", 0x540a: "TCXONC", 0x540b: "TCFLSH", 0x5425: "TCSBRKP",
	0x540f: "TIOCGPGRP", 0x5410: "TIOCSPGRP", 0x5411: "TIOCOUTQ", 0x5413: "TIOCGWINSZ", 0x5414: "TIOCSWINSZ",
	0x5422: "TIOCNOTTY", 0x5424: "TIOCGETD", 0x5429: "TIOCGSID",
	0x80045430: "TIOCGPTN", 0x40045431: "TIOCSPTLCK", 0x5441: "TIOCGPTPEER",
	0x541b: "FIONREAD", 0x5421: "FIONBIO", 0x5450: "FIONCLEX", 0x5451: "FIOCLEX", 0x5452: "FIOASYNC", 0x5460: "FIOQSIZE",
	0x8901: "FIOSETOWN", 0x8902: "SIOCSPGRP", 0x8903: "FIOGETOWN", 0x8904: "SIOCGPGRP", 0x8905: "SIOCATMARK",
	0x8906: "SIOCGSTAMP", 0x8907: "SIOCGSTAMPNS", 0x894b: "SIOCOUTQNSD",
	0x8910: "SIOCGIFNAME", 0x8912: "SIOCGIFCONF", 0x8913: "SIOCGIFFLAGS", 0x8915: "SIOCGIFADDR", 0x8917: "SIOCGIFDSTADDR",
	0x8919: "SIOCGIFBRDADDR", 0x891b: "SIOCGIFNETMASK", 0x891d: "SIOCGIFMETRIC", 0x8921: "SIOCGIFMTU", 0x8927: "SIOCGIFHWADDR",
	0x8933: "SIOCGIFINDEX", 0x8942: "SIOCGIFTXQLEN",
	0x80086601: "FS_IOC_GETFLAGS", 0x80046601: "FS_IOC32_GETFLAGS", 0x80087601: "FS_IOC_GETVERSION", 0x80047601: "FS_IOC32_GETVERSION",
	0x801c581f: "FS_IOC_FSGETXATTR", 0xc020660b: "FS_IOC_FIEMAP", 0x00000002: "FIGETBSZ",
	0x40049409: "FICLONE", 0x4020940d: "FICLONERANGE", 0xc0189436: "FIDEDUPERANGE",
}

// ioctlRefused are ioctl commands refused on purpose (EPERM): what sets a
// file's attribute flags or its inode's version (Landlock governs
// neither), and what reaches past the server through a terminal it holds:
// typing into it, pasting a selection, taking it as its controlling
// terminal, redirecting the console, changing its line discipline.
var ioctlRefused = map[uint32]string{
	0x40086602: "FS_IOC_SETFLAGS", 0x40046602: "FS_IOC32_SETFLAGS", 0x401c5820: "FS_IOC_FSSETXATTR",
	0x40087602: "FS_IOC_SETVERSION", 0x40047602: "FS_IOC32_SETVERSION", 0x41009432: "FS_IOC_SETFSLABEL",
	0x5412: "TIOCSTI", 0x541c: "TIOCLINUX", 0x541d: "TIOCCONS", 0x540e: "TIOCSCTTY", 0x5423: "TIOCSETD",
	0x8946: "SIOCETHTOOL",
}

// Socket families and types the checks name (the same on both
// architectures).
const (
	afUnix        = 1
	afInet        = 2
	afInet6       = 10
	afNetlink     = 16
	netlinkRoute  = 0
	sockStream    = 1
	sockDgram     = 2
	sockSeqpacket = 5
	sockTypeMask  = 0xf

	oTrunc   = 0x200
	oAccMode = 3
	oWronly  = 1
	oRdwr    = 2

	msgFastOpen = 0x20000000 // MSG_FASTOPEN

	seccompSetModeFilter   = 1
	seccompFlagNewListener = 1 << 3
)

// ruleFor is the row of call, if any.
func ruleFor(call string) (sysRule, bool) {
	i, ok := rowOf()[call]
	if !ok {
		return sysRule{}, false
	}
	return syscallTable[i], true
}

// rowOf indexes the table by call (the confining child builds a filter at
// every start: a scan of the rows for each call cost 0.7 ms).
var rowOf = sync.OnceValue(func() map[string]int {
	m := make(map[string]int, 512)
	for i, r := range syscallTable {
		for _, c := range r.calls {
			m[c] = i
		}
	}
	return m
})
