package confine

// The seccomp filter of a confined server, built from syscallTable for one
// architecture and mode. Classic BPF, as seccomp takes it:
//
//  1. the architecture: any but the native one is refused (EPERM), and on
//     x86-64 so is an x32 call (its number has bit 30 set);
//  2. the number, found in a balanced tree of ranges that share an
//     action (a dozen comparisons, not one per call: every system call of
//     the server pays for the walk);
//  3. a leaf returns the action, or jumps to the argument check that
//     decides it (sockets, ioctl commands, seccomp's flags, an open's
//     O_TRUNC below Landlock ABI 3).
//
// Numbers past the table's, and holes in it, fall in ranges that answer
// ENOSYS. The program is pure data, built and tested (filter_test.go runs
// it through an interpreter for every call, architecture and ABI) on any
// machine; seccomp_linux.go installs it.

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync"
)

// nativeArch is the AUDIT_ARCH_* value of the only system call ABI a
// confined server may use; 0 where the table has no numbers for this
// architecture (KernelABI then says servers cannot be confined here).
var nativeArch = map[string]uint32{
	"amd64": archX86_64,
	"arm64": archAArch64,
}[runtime.GOARCH]

// filterCache holds each mode's filter for this architecture, as the
// confining child gets it (Wrap builds it once, not at every start).
var filterCache sync.Map // filterMode -> []byte

// nativeFilter is the filter of mode m for this architecture, encoded as
// the kernel's struct sock_filter array (8 bytes an instruction, little
// endian): what the confining child installs.
func nativeFilter(m filterMode) ([]byte, error) {
	if b, ok := filterCache.Load(m); ok {
		return b.([]byte), nil
	}
	if nativeArch == 0 {
		return nil, fmt.Errorf("no system call filter for %s", runtime.GOARCH)
	}
	prog, err := filterProgram(nativeArch, m)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		b = binary.LittleEndian.AppendUint16(b, in.code)
		b = append(b, in.jt, in.jf)
		b = binary.LittleEndian.AppendUint32(b, in.k)
	}
	filterCache.Store(m, b)
	return b, nil
}

// decodeFilter is nativeFilter's encoding read back.
func decodeFilter(b []byte) ([]insn, error) {
	if len(b) == 0 || len(b)%8 != 0 || len(b)/8 > 4096 {
		return nil, fmt.Errorf("a system call filter of %d bytes", len(b))
	}
	prog := make([]insn, len(b)/8)
	for i := range prog {
		c := b[8*i:]
		prog[i] = insn{code: binary.LittleEndian.Uint16(c), jt: c[2], jf: c[3], k: binary.LittleEndian.Uint32(c[4:])}
	}
	return prog, nil
}

// An insn is one classic BPF instruction (struct sock_filter).
type insn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

// Classic BPF opcodes the filter uses (linux/bpf_common.h).
const (
	bpfLdAbsW = 0x20 // BPF_LD | BPF_W | BPF_ABS: A = the 32-bit word at offset k
	bpfJa     = 0x05 // BPF_JMP | BPF_JA: skip k instructions
	bpfJeq    = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgt    = 0x25 // BPF_JMP | BPF_JGT | BPF_K
	bpfJge    = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfJset   = 0x45 // BPF_JMP | BPF_JSET | BPF_K
	bpfAnd    = 0x54 // BPF_ALU | BPF_AND | BPF_K
	bpfRet    = 0x06 // BPF_RET | BPF_K
)

// Offsets in struct seccomp_data: the number, the architecture, and each
// argument's low 32 bits (both architectures are little-endian; every
// argument a check reads is an int or unsigned int, which the kernel
// takes from the low half).
const (
	dataNr   = 0
	dataArch = 4
)

func dataArg(i int) uint32 { return 16 + 8*uint32(i) }

// asm assembles a program whose jumps name labels, and resolves them.
type asm struct {
	prog   []insn
	labels map[string]int
	// refs are the instructions whose jumps name labels: index, true
	// label, false label ("" for the next instruction; for ja, t only).
	refs []ref
}

type ref struct {
	at   int
	t, f string
}

func newAsm() *asm {
	return &asm{prog: make([]insn, 0, 1024), labels: make(map[string]int, 512), refs: make([]ref, 0, 512)}
}

func (a *asm) ld(off uint32) { a.prog = append(a.prog, insn{code: bpfLdAbsW, k: off}) }

func (a *asm) and(k uint32) { a.prog = append(a.prog, insn{code: bpfAnd, k: k}) }

func (a *asm) ret(k uint32) { a.prog = append(a.prog, insn{code: bpfRet, k: k}) }

// jump is a conditional jump: to label t when it holds, else to f.
func (a *asm) jump(code uint16, k uint32, t, f string) {
	a.refs = append(a.refs, ref{at: len(a.prog), t: t, f: f})
	a.prog = append(a.prog, insn{code: code, k: k})
}

// ja jumps to label t, as far as it is.
func (a *asm) ja(t string) {
	a.refs = append(a.refs, ref{at: len(a.prog), t: t})
	a.prog = append(a.prog, insn{code: bpfJa})
}

func (a *asm) label(name string) {
	if _, dup := a.labels[name]; dup {
		panic("confine: label " + name + " twice")
	}
	a.labels[name] = len(a.prog)
}

// resolve fills in every jump: forward only, a conditional one at most
// 255 instructions, as classic BPF has them.
func (a *asm) resolve() ([]insn, error) {
	off := func(from int, label string) (uint32, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := a.labels[label]
		if !ok {
			return 0, fmt.Errorf("no label %q", label)
		}
		if to <= from {
			return 0, fmt.Errorf("jump from %d back to %q", from, label)
		}
		return uint32(to - from - 1), nil
	}
	for _, r := range a.refs {
		t, err := off(r.at, r.t)
		if err != nil {
			return nil, err
		}
		if a.prog[r.at].code == bpfJa {
			a.prog[r.at].k = t
			continue
		}
		f, err := off(r.at, r.f)
		if err != nil {
			return nil, err
		}
		if t > 255 || f > 255 {
			return nil, fmt.Errorf("conditional jump at %d too far (%d, %d)", r.at, t, f)
		}
		a.prog[r.at].jt, a.prog[r.at].jf = uint8(t), uint8(f)
	}
	return a.prog, nil
}

// span is a range of numbers, from lo up to the next span's lo, that share
// an action.
type span struct {
	lo  uint32
	act action
}

// spans are the actions of arch's numbers under m, from 0 up: every
// number the table names, the holes between (ENOSYS) and everything past
// the last (ENOSYS).
func spans(arch uint32, m filterMode) ([]span, error) {
	nums, ok := sysnums[arch]
	if !ok {
		return nil, fmt.Errorf("no system call table for architecture %#x", arch)
	}
	top := uint32(0)
	for _, nr := range nums {
		top = max(top, nr)
	}
	byNr := make([]action, top+2)
	for i := range byNr {
		byNr[i] = gone
	}
	// A row's action is the same for each of its calls: asked once.
	acts := make([]action, len(syscallTable))
	asked := make([]bool, len(syscallTable))
	rows := rowOf()
	for name, nr := range nums {
		i, ok := rows[name]
		if !ok {
			return nil, fmt.Errorf("system call %s is in no row of the table", name)
		}
		if !asked[i] {
			acts[i], asked[i] = syscallTable[i].act(m), true
		}
		byNr[nr] = acts[i]
	}
	var out []span
	for nr, act := range byNr {
		if len(out) == 0 || out[len(out)-1].act != act {
			out = append(out, span{lo: uint32(nr), act: act})
		}
	}
	return out, nil
}

// filterProgram is the filter of a server of architecture arch (an
// AUDIT_ARCH_* value) confined at Landlock ABI m.abi, observed or not.
func filterProgram(arch uint32, m filterMode) ([]insn, error) {
	ss, err := spans(arch, m)
	if err != nil {
		return nil, err
	}
	a := newAsm()
	a.ld(dataArch)
	a.jump(bpfJeq, arch, "native", "")
	a.ret(retErrno | errPERM) // a foreign ABI: i386, AArch32
	a.label("native")
	a.ld(dataNr)
	if arch == archX86_64 {
		a.jump(bpfJge, x32Bit, "", "tree")
		a.ret(retErrno | errPERM) // x32
		a.label("tree")
	}
	t := tree{a: a, spans: ss, prefix: "nr"}
	t.emit(0, len(ss))
	var checks []string
	for _, s := range ss {
		if s.act.check != "" && !slices.Contains(checks, s.act.check) {
			checks = append(checks, s.act.check)
		}
	}
	sort.Strings(checks)
	for _, c := range checks {
		a.label("check:" + c)
		if err := writeCheck(a, c, arch, m); err != nil {
			return nil, err
		}
	}
	return a.resolve()
}

// tree writes the binary search over spans.
type tree struct {
	a      *asm
	spans  []span
	prefix string // of its labels
	next   int    // labels made
}

// size is the number of instructions emit(i, j) writes.
func (t *tree) size(i, j int) int {
	if j-i == 1 {
		return 1
	}
	mid := (i + j) / 2
	left := t.size(i, mid)
	n := 1 + left + t.size(mid, j)
	if left > 255 {
		n++ // the long jump to the right half
	}
	return n
}

// emit writes the search over spans[i:j]: a number at or past the middle
// span's lo goes right, else left.
func (t *tree) emit(i, j int) {
	if j-i == 1 {
		act := t.spans[i].act
		if act.check != "" {
			t.a.ja("check:" + act.check)
		} else {
			t.a.ret(act.ret)
		}
		return
	}
	mid := (i + j) / 2
	t.next++
	right := t.prefix + strconv.Itoa(t.next)
	if t.size(i, mid) > 255 {
		far := right + "far"
		left := right + "left"
		t.a.jump(bpfJge, t.spans[mid].lo, far, left)
		t.a.label(far)
		t.a.ja(right)
		t.a.label(left)
	} else {
		t.a.jump(bpfJge, t.spans[mid].lo, right, "")
	}
	t.emit(i, mid)
	t.a.label(right)
	t.emit(mid, j)
}

// writeCheck writes argument check c for architecture arch and mode m;
// it ends in returns.
func writeCheck(a *asm, c string, arch uint32, m filterMode) error {
	switch c {
	case checkOpenTrunc:
		pass := retAllow
		if m.observed {
			pass = retNotify
		}
		writeOpenTruncCheck(a, arch, uint32(pass))
	case checkSocket:
		writeSocketCheck(a, m)
	case checkSocketpair:
		writeSocketpairCheck(a, m)
	case checkSendFlags:
		writeSendFlagsCheck(a, arch)
	case checkSeccomp:
		a.ld(dataArg(0))
		a.jump(bpfJeq, seccompSetModeFilter, "", "seccomp-allow")
		a.ld(dataArg(1))
		a.jump(bpfJset, seccompFlagNewListener, "", "seccomp-allow")
		a.ret(retErrno | errPERM) // a listener of its own would be told first
		a.label("seccomp-allow")
		a.ret(retAllow)
	case checkIoctl:
		// A tree over the commands, as over the numbers: ioctl is a hot
		// call of some runtimes (a non-blocking flag, a terminal's size).
		a.ld(dataArg(1))
		t := tree{a: a, spans: ioctlSpans(), prefix: "ioctl"}
		t.emit(0, len(t.spans))
	default:
		return fmt.Errorf("no argument check %q", c)
	}
	return nil
}

// writeOpenTruncCheck refuses an open that would empty a file it does not
// open for writing (O_TRUNC with O_RDONLY); other opens get pass.
func writeOpenTruncCheck(a *asm, arch, pass uint32) {
	// open(path, flags) and openat(dirfd, path, flags): the flags are
	// argument 1 or 2; the number says which.
	loadArgOf(a, sysnums[arch]["openat"], 2, 1, "trunc")
	a.jump(bpfJset, oTrunc, "", "open-pass")
	a.and(oAccMode)
	a.jump(bpfJeq, oWronly, "open-pass", "")
	a.jump(bpfJeq, oRdwr, "open-pass", "")
	a.ret(retErrno | errACCES) // emptying a file it opens without writing
	a.label("open-pass")
	a.ret(pass)
}

// writeSocketCheck lets a socket of the families a server needs be made:
// inet ones unless its network is off, unix ones (below the Landlock ABI
// that scopes them, stream ones only, and only where connects are seen),
// netlink route ones (the addresses of its interfaces).
func writeSocketCheck(a *asm, m filterMode) {
	inet := "sock-allow"
	if m.noInet {
		inet = "sock-refuse"
	}
	a.ld(dataArg(0))
	a.jump(bpfJeq, afInet, inet, "")
	a.jump(bpfJeq, afInet6, inet, "")
	a.jump(bpfJeq, afUnix, "sock-unix", "")
	a.jump(bpfJeq, afNetlink, "sock-netlink", "")
	a.ret(retErrno | errAFNOSUPPORT)
	a.label("sock-netlink")
	a.ld(dataArg(2))
	a.jump(bpfJeq, netlinkRoute, "sock-allow", "")
	a.ret(retErrno | errPROTONOSUPP)
	a.label("sock-unix")
	if m.abi < unixSocketABI {
		a.ld(dataArg(1))
		a.and(sockTypeMask)
		a.jump(bpfJeq, sockStream, "sock-stream", "")
		a.jump(bpfJeq, sockSeqpacket, "sock-stream", "")
		a.ret(retErrno | errACCES) // a datagram unix socket sends to any name
		a.label("sock-stream")
		if !m.observed {
			a.ret(retErrno | errACCES) // nobody checks its connects
		} else {
			a.ret(retAllow)
		}
	}
	a.label("sock-allow")
	a.ret(retAllow)
	if m.noInet {
		a.label("sock-refuse")
		a.ret(retErrno | errACCES) // its network is off
	}
}

// writeSocketpairCheck lets a unix socket pair be made, a datagram one
// only from the Landlock ABI that scopes unix sockets.
func writeSocketpairCheck(a *asm, m filterMode) {
	a.ld(dataArg(0))
	a.jump(bpfJeq, afUnix, "pair-unix", "")
	a.ret(retErrno | errAFNOSUPPORT)
	a.label("pair-unix")
	if m.abi < unixSocketABI {
		a.ld(dataArg(1))
		a.and(sockTypeMask)
		a.jump(bpfJeq, sockDgram, "", "pair-allow")
		a.ret(retErrno | errACCES)
	}
	a.label("pair-allow")
	a.ret(retAllow)
}

// loadArgOf loads argument argOfNr of a call numbered nr, else argument
// other: where two calls checked alike take the same value in different
// places. It uses the labels prefix and prefix+"-nr".
func loadArgOf(a *asm, nr uint32, argOfNr, other int, prefix string) {
	a.ld(dataNr)
	a.jump(bpfJeq, nr, prefix+"-nr", "")
	a.ld(dataArg(other))
	a.ja(prefix)
	a.label(prefix + "-nr")
	a.ld(dataArg(argOfNr))
	a.label(prefix)
}

// writeSendFlagsCheck refuses MSG_FASTOPEN, a connect hidden in a send.
func writeSendFlagsCheck(a *asm, arch uint32) {
	// sendmsg(fd, msg, flags); sendto(fd, buf, len, flags, …) and
	// sendmmsg(fd, vec, vlen, flags).
	loadArgOf(a, sysnums[arch]["sendmsg"], 2, 3, "send-flags")
	a.jump(bpfJset, msgFastOpen, "", "send-allow")
	a.ret(retErrno | errOPNOTSUPP)
	a.label("send-allow")
	a.ret(retAllow)
}

// ioctlSpans are the ioctl commands as spans: each allowed or refused one
// a span of its own, what lies between them ENOTTY.
func ioctlSpans() []span {
	acts := map[uint32]action{}
	for c := range ioctlAllowed {
		acts[c] = allowed
	}
	for c := range ioctlRefused {
		acts[c] = refused
	}
	var out []span
	add := func(lo uint32, act action) {
		if n := len(out); n > 0 && out[n-1].lo == lo {
			out = out[:n-1] // an empty span: the command right after the last
		}
		if n := len(out); n > 0 && out[n-1].act == act {
			return
		}
		out = append(out, span{lo: lo, act: act})
	}
	add(0, errno(errNOTTY))
	for _, c := range sortedKeys(acts) {
		add(c, acts[c])
		if c < 0xffffffff {
			add(c+1, errno(errNOTTY))
		}
	}
	return out
}

func sortedKeys[V any](m map[uint32]V) []uint32 {
	out := make([]uint32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
