//go:build linux && (amd64 || arm64)

package filecall_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"rootkeeper/app/apptest"
	"rootkeeper/app/filecall"
)

// BenchmarkSync syncs a 4 KiB file rewritten each time, the ordinary way
// (fdatasync through the scheduler) and through the kernel (Sync: AIO,
// waited for in the poller). cpu-us is this process's CPU a sync: the
// kernel's, as the ordinary call makes it, is counted; AIO's runs in a
// kernel worker, which is not this process's.
func BenchmarkSync(b *testing.B) {
	for _, how := range []string{"ordinary", "kernel"} {
		b.Run(how, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "f"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			fd, page := int(f.Fd()), make([]byte, 4096)
			before := apptest.SelfCPU()
			b.ResetTimer()
			for i := range b.N {
				page[0] = byte(i)
				if _, err := f.WriteAt(page, 0); err != nil {
					b.Fatal(err)
				}
				if how == "ordinary" {
					err = syscall.Fdatasync(fd)
				} else {
					err = filecall.Sync(fd, true)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((apptest.SelfCPU()-before).Microseconds())/float64(b.N), "cpu-us")
		})
	}
}
