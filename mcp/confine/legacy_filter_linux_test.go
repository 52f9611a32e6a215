package confine

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// legacyFilter is the filter before the allowlist, for the benchmarks'
// anchor: one comparison per observed call (pathCalls, metaCalls), those
// sent to the observer, everything else allowed but for io_uring and the
// chattr ioctls — a list of what to catch.
func legacyFilter() []byte {
	var nrs []uint32
	for nr := range pathCalls {
		nrs = append(nrs, nr)
	}
	for nr := range metaCalls {
		nrs = append(nrs, nr)
	}
	n := len(nrs)
	prog := []insn{
		{code: bpfLdAbsW, k: dataArch},
		{code: bpfJeq, jt: 1, k: nativeArch},
		{code: bpfRet, k: retAllow},
		{code: bpfLdAbsW, k: dataNr},
	}
	for i, nr := range nrs {
		prog = append(prog, insn{code: bpfJeq, jt: uint8(2 + n - i), k: nr})
	}
	prog = append(prog,
		insn{code: bpfJeq, jt: 3, k: unix.SYS_IOCTL},
		insn{code: bpfJeq, jt: 6, k: unix.SYS_IO_URING_SETUP},
		insn{code: bpfRet, k: retAllow},
		insn{code: bpfRet, k: retNotify},
		insn{code: bpfLdAbsW, k: dataArg(1)},
		insn{code: bpfJeq, jt: 2, k: 0x40086602},
		insn{code: bpfJeq, jt: 1, k: 0x401c5820},
		insn{code: bpfRet, k: retAllow},
		insn{code: bpfRet, k: retErrno | errPERM},
	)
	var b []byte
	for _, in := range prog {
		b = binary.LittleEndian.AppendUint16(b, in.code)
		b = append(b, in.jt, in.jf)
		b = binary.LittleEndian.AppendUint32(b, in.k)
	}
	return b
}

// withLegacyFilter makes Wrap carry legacyFilter for observed servers at
// the running ABI until the benchmark ends.
func withLegacyFilter(b *testing.B) {
	abi, err := ABI()
	if err != nil {
		b.Fatal(err)
	}
	m := filterMode{abi: abi, observed: true}
	now, err := nativeFilter(m)
	if err != nil {
		b.Fatal(err)
	}
	filterCache.Store(m, legacyFilter())
	b.Cleanup(func() { filterCache.Store(m, now) })
}

// BenchmarkAllowlistOpens: 1,000 opens inside its root by an observed
// confined server, under the allowlist and under the filter before it
// (the anchor), in the same run: what the allowlist adds to an open.
func BenchmarkAllowlistOpens(b *testing.B) {
	b.Run("before", func(b *testing.B) { withLegacyFilter(b); benchOpens(b, true) })
	b.Run("allowlist", func(b *testing.B) { benchOpens(b, true) })
}

// BenchmarkAllowlistCalls: 1,000,000 calls the filter allows (getppid) by
// an observed confined server, under each filter: what the filter costs a
// call that never reaches the observer (its start included, 2-3 ms).
func BenchmarkAllowlistCalls(b *testing.B) {
	b.Run("before", func(b *testing.B) { withLegacyFilter(b); benchOps1(b, "spin:1000000") })
	b.Run("allowlist", func(b *testing.B) { benchOps1(b, "spin:1000000") })
}

// benchOps1 runs an observed confined nosy -try op.
func benchOps1(b *testing.B, op string) {
	prog := nosy(b)
	p := Policy{Roots: []string{b.TempDir()}, Temp: filepath.Join(b.TempDir(), "tmp")}
	for b.Loop() {
		cmd := exec.Command(prog, "-try", op)
		_, obs, err := WrapObserved(cmd, p)
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		obs.Start(nil)
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		obs.Close()
	}
}

// BenchmarkAllowlistStart: the start of an observed confined server that
// does nothing (nosy -try with no operation), under each filter.
func BenchmarkAllowlistStart(b *testing.B) {
	start := func(b *testing.B) {
		prog := nosy(b)
		p := Policy{Roots: []string{b.TempDir()}, Temp: filepath.Join(b.TempDir(), "tmp")}
		for b.Loop() {
			cmd := exec.Command(prog, "-try")
			_, obs, err := WrapObserved(cmd, p)
			if err != nil {
				b.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			obs.Start(nil)
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
			obs.Close()
		}
	}
	b.Run("before", func(b *testing.B) { withLegacyFilter(b); start(b) })
	b.Run("allowlist", start)
}
