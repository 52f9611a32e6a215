package confine

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
)

// seccompData is struct seccomp_data as a filter reads it.
type seccompData struct {
	nr   uint32
	arch uint32
	args [6]uint64
}

func (d seccompData) bytes() []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[0:], d.nr)
	binary.LittleEndian.PutUint32(b[4:], d.arch)
	for i, a := range d.args {
		binary.LittleEndian.PutUint64(b[16+8*i:], a)
	}
	return b
}

// run interprets prog on d as the kernel's seccomp does, checking as it
// goes what the kernel checks when the filter is installed (only the
// instructions seccomp allows, aligned loads inside seccomp_data, jumps
// forward and inside the program). It returns the action and the number
// of instructions run.
func run(t testing.TB, prog []insn, d seccompData) (uint32, int) {
	t.Helper()
	data := d.bytes()
	var a uint32
	steps := 0
	for pc := 0; pc < len(prog); pc++ {
		steps++
		in := prog[pc]
		switch in.code {
		case bpfLdAbsW:
			if in.k%4 != 0 || in.k+4 > uint32(len(data)) {
				t.Fatalf("instruction %d loads at %d", pc, in.k)
			}
			a = binary.LittleEndian.Uint32(data[in.k:])
		case bpfAnd:
			a &= in.k
		case bpfRet:
			return in.k, steps
		case bpfJa:
			pc += int(in.k)
		case bpfJeq, bpfJgt, bpfJge, bpfJset:
			var hold bool
			switch in.code {
			case bpfJeq:
				hold = a == in.k
			case bpfJgt:
				hold = a > in.k
			case bpfJge:
				hold = a >= in.k
			case bpfJset:
				hold = a&in.k != 0
			}
			if hold {
				pc += int(in.jt)
			} else {
				pc += int(in.jf)
			}
		default:
			t.Fatalf("instruction %d: opcode %#x is not one seccomp takes here", pc, in.code)
		}
		if pc+1 > len(prog) {
			t.Fatalf("instruction %d jumps past the end", pc)
		}
	}
	t.Fatalf("the program ran off its end")
	return 0, steps
}

var arches = map[uint32]string{archX86_64: "x86-64", archAArch64: "arm64"}

// modes are every mode a filter is built for: each Landlock ABI from 1 to
// the newest this package knows, observed or not, with and without inet,
// and observed from a thread of Rootkeeper's.
func modes() []filterMode {
	var out []filterMode
	for abi := 1; abi <= 9; abi++ {
		out = append(out, filterMode{abi: abi, observed: true}, filterMode{abi: abi},
			filterMode{abi: abi, observed: true, noInet: true}, filterMode{abi: abi, noInet: true},
			filterMode{abi: abi, observed: true, noInet: true, execUnseen: true})
	}
	return out
}

func program(t testing.TB, arch uint32, m filterMode) []insn {
	t.Helper()
	prog, err := filterProgram(arch, m)
	if err != nil {
		t.Fatalf("%s %+v: %v", arches[arch], m, err)
	}
	if len(prog) == 0 || len(prog) > 4096 || prog[len(prog)-1].code != bpfRet {
		t.Fatalf("%s %+v: %d instructions, the last %#x", arches[arch], m, len(prog), prog[len(prog)-1].code)
	}
	return prog
}

func retText(r uint32) string {
	switch {
	case r == retAllow:
		return "allow"
	case r == retNotify:
		return "notify"
	case r&retActionMask == retErrno:
		return fmt.Sprintf("errno %d", r&errnoMask)
	}
	return fmt.Sprintf("%#x", r)
}

// TestEveryCallIsReviewed: every system call of x86-64 and arm64 is in
// exactly one row of the table, and the table names no call that neither
// has (a misspelt name would be a call nobody reviewed).
func TestEveryCallIsReviewed(t *testing.T) {
	rows := map[string]int{}
	for i, r := range syscallTable {
		if r.class == "" || r.why == "" || r.act == nil {
			t.Errorf("row %d (%v) lacks its class, reason or action", i, r.calls)
		}
		for _, c := range r.calls {
			if j, dup := rows[c]; dup {
				t.Errorf("%s is in rows %d and %d", c, j, i)
			}
			rows[c] = i
		}
	}
	known := map[string]bool{}
	for arch, nums := range sysnums {
		for name := range nums {
			known[name] = true
			if _, ok := rows[name]; !ok {
				t.Errorf("%s: %s (%d) is in no row", arches[arch], name, nums[name])
			}
		}
	}
	for name := range rows {
		if !known[name] {
			t.Errorf("the table names %s, which neither architecture has", name)
		}
	}
}

// TestFilterFollowsTheTable: for every architecture, Landlock ABI and
// mode, every call's number leads to the action its row gives (calls
// decided by their arguments are tried in TestFilterChecks), every
// number the table does not name answers ENOSYS, and no call costs more
// than a couple of dozen instructions.
func TestFilterFollowsTheTable(t *testing.T) {
	for arch, nums := range sysnums {
		for _, m := range modes() {
			prog := program(t, arch, m)
			named := map[uint32]bool{}
			worst := 0
			for name, nr := range nums {
				named[nr] = true
				r, _ := ruleFor(name)
				want := r.act(m)
				got, steps := run(t, prog, seccompData{nr: nr, arch: arch})
				if want.check == "" && got != want.ret {
					t.Errorf("%s %+v: %s: %s, want %s", arches[arch], m, name, retText(got), retText(want.ret))
				}
				if want.check == "" {
					worst = max(worst, steps)
				}
			}
			if worst > 16 {
				t.Errorf("%s %+v: a call runs %d instructions of the filter", arches[arch], m, worst)
			}
			for nr := uint32(0); nr < 1100; nr++ {
				if named[nr] {
					continue
				}
				if got, _ := run(t, prog, seccompData{nr: nr, arch: arch}); got != retErrno|errNOSYS {
					t.Errorf("%s %+v: number %d, in no row: %s, want ENOSYS", arches[arch], m, nr, retText(got))
				}
			}
			for _, nr := range []uint32{0x3fffffff, 0x7fffffff, 0xffffffff} {
				if got, _ := run(t, prog, seccompData{nr: nr, arch: arch}); got&retActionMask != retErrno {
					t.Errorf("%s %+v: number %#x: %s, want an error", arches[arch], m, nr, retText(got))
				}
			}
		}
	}
}

// TestFilterRefusesForeignABIs: a call through another ABI than the
// native one is refused at every Landlock ABI, observed or not — i386's
// chmod (int 0x80), x32's chmod, AArch32's — and so is io_uring.
func TestFilterRefusesForeignABIs(t *testing.T) {
	const (
		archI386 = 0x40000003
		archARM  = 0x40000028
	)
	for _, m := range modes() {
		x86 := program(t, archX86_64, m)
		arm := program(t, archAArch64, m)
		cases := []struct {
			what string
			prog []insn
			d    seccompData
		}{
			{"i386 chmod on x86-64", x86, seccompData{nr: 15, arch: archI386}},
			{"i386 socketcall on x86-64", x86, seccompData{nr: 102, arch: archI386}},
			{"x32 chmod", x86, seccompData{nr: x32Bit | 90, arch: archX86_64}},
			{"x32 read", x86, seccompData{nr: x32Bit, arch: archX86_64}},
			{"AArch32 chmod on arm64", arm, seccompData{nr: 15, arch: archARM}},
			{"an x86-64 call on arm64", arm, seccompData{nr: 90, arch: archX86_64}},
		}
		for _, c := range cases {
			if got, _ := run(t, c.prog, c.d); got != retErrno|errPERM {
				t.Errorf("%+v: %s: %s, want EPERM", m, c.what, retText(got))
			}
		}
	}
}

// call is a named call with its arguments.
type call struct {
	name string
	args [6]uint64
}

// TestFilterOnTheHoles: the calls the issue found passing are answered,
// at every ABI and on both architectures: file_setattr (Linux 6.17) is
// refused, truncate(path) below Landlock ABI 3 is seen by the observer (or
// refused unobserved), an open for reading that truncates is refused
// there, inotify watches are seen by the observer (refused unobserved),
// and nobody can take the observer's place with a listener of its own.
func TestFilterOnTheHoles(t *testing.T) {
	perm, acces := retErrno|errPERM, retErrno|errACCES
	for arch, nums := range sysnums {
		for _, m := range modes() {
			prog := program(t, arch, m)
			try := func(c call) uint32 {
				nr, ok := nums[c.name]
				if !ok {
					t.Fatalf("%s has no %s", arches[arch], c.name)
				}
				got, _ := run(t, prog, seccompData{nr: nr, arch: arch, args: c.args})
				return got
			}
			notifyOr := func(unobserved uint32) uint32 {
				if m.observed {
					return retNotify
				}
				return unobserved
			}
			pass := notifyOr(retAllow)
			want := []struct {
				c    call
				want uint32
			}{
				{call{name: "file_setattr"}, perm},
				{call{name: "io_uring_setup"}, perm},
				{call{name: "fanotify_init"}, perm},
				{call{name: "open_by_handle_at"}, perm},
				{call{name: "keyctl"}, perm},
				{call{name: "setxattrat"}, retErrno | errNOSYS},
				{call{name: "inotify_add_watch"}, notifyOr(perm)},
				{call{name: "fchmodat"}, notifyOr(perm)},
				{call{name: "utimensat"}, notifyOr(perm)},
				{call{name: "seccomp", args: [6]uint64{seccompSetModeFilter, seccompFlagNewListener}}, perm},
				{call{name: "seccomp", args: [6]uint64{seccompSetModeFilter, 0}}, retAllow},
				{call{name: "openat", args: [6]uint64{0, 0, oWronly | oTrunc}}, pass},
				{call{name: "openat", args: [6]uint64{0, 0, 0}}, pass},
			}
			if m.abi < 3 {
				want = append(want,
					struct {
						c    call
						want uint32
					}{call{name: "truncate"}, notifyOr(perm)},
					struct {
						c    call
						want uint32
					}{call{name: "openat", args: [6]uint64{0, 0, oTrunc}}, acces},
					struct {
						c    call
						want uint32
					}{call{name: "openat", args: [6]uint64{0, 0, 3 | oTrunc}}, acces},
					struct {
						c    call
						want uint32
					}{call{name: "openat2"}, retErrno | errNOSYS},
				)
			} else {
				want = append(want,
					struct {
						c    call
						want uint32
					}{call{name: "truncate"}, pass},
					struct {
						c    call
						want uint32
					}{call{name: "openat", args: [6]uint64{0, 0, oTrunc}}, pass},
				)
			}
			for _, w := range want {
				if got := try(w.c); got != w.want {
					t.Errorf("%s %+v: %s%v: %s, want %s", arches[arch], m, w.c.name, w.c.args[:3], retText(got), retText(w.want))
				}
			}
		}
	}
}

// TestFilterChecks: the calls decided by their arguments.
func TestFilterChecks(t *testing.T) {
	for arch, nums := range sysnums {
		for _, m := range modes() {
			prog := program(t, arch, m)
			try := func(name string, args ...uint64) uint32 {
				var a [6]uint64
				copy(a[:], args)
				got, _ := run(t, prog, seccompData{nr: nums[name], arch: arch, args: a})
				return got
			}
			where := fmt.Sprintf("%s %+v", arches[arch], m)
			// ioctl: the allowed commands pass, the refused ones fail with
			// EPERM, any other with ENOTTY; only the low 32 bits count.
			for cmd, name := range ioctlAllowed {
				if got := try("ioctl", 1, uint64(cmd)|0xdead<<32); got != retAllow {
					t.Errorf("%s: ioctl %s: %s", where, name, retText(got))
				}
			}
			for cmd, name := range ioctlRefused {
				if got := try("ioctl", 1, uint64(cmd)); got != retErrno|errPERM {
					t.Errorf("%s: ioctl %s: %s, want EPERM", where, name, retText(got))
				}
			}
			for _, cmd := range []uint64{0, 0x4004661e /* FS_IOC_SETFSUUID-like */, 0xc0109428, 0x1234} {
				if got := try("ioctl", 1, cmd); got != retErrno|errNOTTY {
					t.Errorf("%s: ioctl %#x: %s, want ENOTTY", where, cmd, retText(got))
				}
			}
			// socket: families and, below ABI 9, unix socket types.
			unixStream := uint32(retAllow)
			unixDgram := uint32(retAllow)
			if m.abi < unixSocketABI {
				unixDgram = retErrno | errACCES
				if !m.observed {
					unixStream = retErrno | errACCES
				}
			}
			inet := uint32(retAllow)
			if m.noInet {
				inet = retErrno | errACCES
			}
			sockets := []struct {
				args []uint64
				want uint32
			}{
				{[]uint64{afInet, sockStream}, inet},
				{[]uint64{afInet6, sockDgram | 0x80000 /* SOCK_CLOEXEC */}, inet},
				{[]uint64{afNetlink, 3, netlinkRoute}, retAllow},
				{[]uint64{afNetlink, 3, 9 /* NETLINK_AUDIT */}, retErrno | errPROTONOSUPP},
				{[]uint64{17 /* AF_PACKET */, 3}, retErrno | errAFNOSUPPORT},
				{[]uint64{38 /* AF_ALG */, 5}, retErrno | errAFNOSUPPORT},
				{[]uint64{afUnix, sockStream | 0x80000}, unixStream},
				{[]uint64{afUnix, sockSeqpacket}, unixStream},
				{[]uint64{afUnix, sockDgram}, unixDgram},
			}
			for _, s := range sockets {
				if got := try("socket", s.args...); got != s.want {
					t.Errorf("%s: socket%v: %s, want %s", where, s.args, retText(got), retText(s.want))
				}
			}
			// exec: asked about where observed, unseen from a thread of
			// Rootkeeper's (filterMode.execUnseen).
			wantExec := uint32(retAllow)
			if m.observed && !m.execUnseen {
				wantExec = retNotify
			}
			for _, call := range []string{"execve", "execveat"} {
				if got := try(call); got != wantExec {
					t.Errorf("%s: %s: %s, want %s", where, call, retText(got), retText(wantExec))
				}
			}
			if got := try("socketpair", afUnix, sockStream); got != retAllow {
				t.Errorf("%s: a stream pair: %s", where, retText(got))
			}
			if got := try("socketpair", afUnix, sockDgram); got != unixDgram {
				t.Errorf("%s: a datagram pair: %s, want %s", where, retText(got), retText(unixDgram))
			}
			// open (x86-64): its flags are its second argument.
			if _, ok := nums["open"]; ok && m.abi < 3 {
				if got := try("open", 0, oTrunc); got != retErrno|errACCES {
					t.Errorf("%s: open O_RDONLY|O_TRUNC: %s", where, retText(got))
				}
				if got := try("open", 0, oRdwr|oTrunc, oTrunc); got == retErrno|errACCES {
					t.Errorf("%s: open O_RDWR|O_TRUNC refused", where)
				}
			}
		}
	}
}

// TestFilterTreeIsShallow: the search over numbers takes few steps (a
// call's cost), and the jumps the tree needs beyond classic BPF's 255
// are made (a table with every number apart forces them).
func TestFilterTreeIsShallow(t *testing.T) {
	var ss []span
	for i := range 2000 {
		ss = append(ss, span{lo: uint32(i), act: action{ret: uint32(i)}})
	}
	a := newAsm()
	a.ld(dataNr)
	tr := tree{a: a, spans: ss}
	tr.emit(0, len(ss))
	prog, err := a.resolve()
	if err != nil {
		t.Fatal(err)
	}
	for _, nr := range []uint32{0, 1, 999, 1000, 1998, 1999, 5000} {
		got, steps := run(t, prog, seccompData{nr: nr})
		if want := min(nr, 1999); got != want {
			t.Errorf("number %d: %d", nr, got)
		}
		if steps > 2+2*11 {
			t.Errorf("number %d: %d steps", nr, steps)
		}
	}
	if !slices.ContainsFunc(prog, func(in insn) bool { return in.code == bpfJa }) {
		t.Error("no long jump in a tree that needs them")
	}
}

// TestFilterTravelsWhole: the filter Wrap carries to the confining child
// decodes to the program built, and the child refuses what is not a
// filter (it then executes nothing: a server is never started without
// one).
func TestFilterTravelsWhole(t *testing.T) {
	if nativeArch == 0 {
		t.Fatalf("no filter for this architecture")
	}
	for _, m := range modes() {
		b, err := nativeFilter(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeFilter(b)
		if err != nil {
			t.Fatal(err)
		}
		if want := program(t, nativeArch, m); !slices.Equal(got, want) {
			t.Errorf("%+v: the filter carried differs from the one built", m)
		}
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, make([]byte, 8*4097)} {
		if _, err := decodeFilter(bad); err == nil {
			t.Errorf("a filter of %d bytes was taken", len(bad))
		}
	}
}
