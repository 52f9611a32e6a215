package confine

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"rootkeeper/app/apptest"
)

// threadsConfined lists this process's threads that run under a seccomp
// filter or with no_new_privs: a thread Landlock confined has both.
func threadsConfined(t *testing.T) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "status"))
		if err != nil {
			continue // it ended meanwhile
		}
		s := string(b)
		if !strings.Contains(s, "\nSeccomp:\t0\n") || !strings.Contains(s, "\nNoNewPrivs:\t0\n") {
			out = append(out, task.Name())
		}
	}
	return out
}

// TestStartFromAConfinedThread: an observed server whose network is off
// starts from a confined thread of this process (no re-exec: the command
// runs its own program), under its ruleset and filter; meanwhile the rest
// of the process is not confined — goroutines read what the server may
// not, a child started afterwards has no filter — and once the server has
// ended no thread of the process is confined.
func TestStartFromAConfinedThread(t *testing.T) {
	needLandlock(t)
	// The thread that launched an earlier test's server ends once that
	// server has: it may still be there for a moment.
	apptest.Eventually(t, "no confined thread left by earlier tests", func() (bool, string) {
		left := threadsConfined(t)
		return len(left) == 0, strings.Join(left, ",")
	})
	base, root, outside := rootAndOutside(t)
	secret := filepath.Join(outside, "secret.txt")
	os.WriteFile(secret, []byte("s"), 0o600)
	goFile := filepath.Join(root, "go")
	prog := nosy(t)
	cmd := exec.Command(prog, "-try", "read:/proc/self/status", "read:"+secret, "waitfor:"+goFile)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	observed(t, cmd, Policy{Roots: []string{root}, Temp: filepath.Join(base, "tmp"), Network: NetworkOff}, nil, nil)
	if cmd.Path != prog {
		t.Errorf("the server was started through %s, not as its own program %s", cmd.Path, prog)
	}
	dec := json.NewDecoder(out)
	var status, read outcome
	if dec.Decode(&status) != nil || dec.Decode(&read) != nil {
		t.Fatal("no results from the server")
	}
	if !strings.Contains(status.Got, "\nSeccomp:\t2\n") || !strings.Contains(status.Got, "\nNoNewPrivs:\t1\n") {
		t.Errorf("the server is not under its filter: %q", status.Got)
	}
	if read.OK {
		t.Errorf("the server read outside its folders: %+v", read)
	}
	// While it runs: the rest of this process reads what it may not.
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if _, err := os.ReadFile(secret); err != nil {
				t.Errorf("a goroutine of Rootkeeper cannot read %s: %v", secret, err)
			}
		})
	}
	wg.Wait()
	child, err := exec.Command("cat", "/proc/self/status").Output()
	if err != nil || !strings.Contains(string(child), "\nSeccomp:\t0\n") {
		t.Errorf("a child started afterwards is confined (%v):\n%s", err, child)
	}
	os.WriteFile(goFile, nil, 0o600)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	apptest.Eventually(t, "no confined thread left", func() (bool, string) {
		left := threadsConfined(t)
		return len(left) == 0, strings.Join(left, ",")
	})
}

// BenchmarkStartInProcess: the start of an observed confined server whose
// network is off (nosy -try, a small Go program that does nothing, to its
// end), from a confined thread of this process, against two anchors: the
// same server started unconfined, and a re-execution of this program that
// confines itself and then runs the server. The three interleaved; medians
// reported, with what confinement adds over unconfined and the ratio to
// the re-execution.
func BenchmarkStartInProcess(b *testing.B) {
	needLandlock(b)
	prog := nosy(b)
	p := Policy{Roots: []string{b.TempDir()}, Temp: filepath.Join(b.TempDir(), "tmp"), Network: NetworkOff}
	const (
		unconfined = iota
		reexec
		inProcess
	)
	start := func(how int) time.Duration {
		launchInProcess = how == inProcess
		defer func() { launchInProcess = true }()
		began := time.Now()
		cmd := exec.Command(prog, "-try")
		cmd.Stderr = os.Stderr
		var obs *Observer
		if how != unconfined {
			var err error
			if _, obs, err = WrapObserved(cmd, p); err != nil {
				b.Fatal(err)
			}
		}
		if err := Start(cmd); err != nil {
			b.Fatal(err)
		}
		if obs != nil {
			obs.Start(nil)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		if obs != nil {
			obs.Close()
		}
		return time.Since(began)
	}
	took := make([][]time.Duration, 3)
	for i := 0; b.Loop(); i++ {
		for k := range 3 {
			how := (i + k) % 3
			took[how] = append(took[how], start(how))
		}
	}
	u, r, in := apptest.Median(took[unconfined]), apptest.Median(took[reexec]), apptest.Median(took[inProcess])
	b.ReportMetric(apptest.Millis(u), "unconfined-ms")
	b.ReportMetric(apptest.Millis(r), "reexec-ms")
	b.ReportMetric(apptest.Millis(in), "inprocess-ms")
	b.ReportMetric(apptest.Millis(in-u), "added-ms")
	b.ReportMetric(float64(in)/float64(r), "ratio-to-reexec")
}

// TestStartWhileTheWorldStops: servers started from a confined thread
// while garbage collections stop the world over and over. The launching
// thread sits in vfork until the server's first execve, holding its place
// in the runtime; were that execve sent to the observer, a stop-the-world
// begun meanwhile would wait for the thread while the observer it waits
// for is stopped, and everything would hang.
func TestStartWhileTheWorldStops(t *testing.T) {
	needLandlock(t)
	prog := nosy(t)
	p := Policy{Roots: []string{t.TempDir()}, Temp: filepath.Join(t.TempDir(), "tmp"), Network: NetworkOff}
	stop := make(chan struct{})
	var gc sync.WaitGroup
	gc.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	})
	done := make(chan error, 1)
	go func() {
		for range 40 {
			cmd := exec.Command(prog, "-try")
			_, obs, err := WrapObserved(cmd, p)
			if err == nil {
				err = Start(cmd)
			}
			if err != nil {
				done <- err
				return
			}
			obs.Start(nil)
			err = cmd.Wait()
			obs.Close()
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(60 * time.Second):
		t.Error("40 starts did not end in 60 s: the launch hangs the runtime")
	}
	close(stop)
	gc.Wait()
}

// BenchmarkWrapObserved is what preparing an observed start of a Node
// server costs before it can start (its ruleset planned, the observer's
// folders resolved): server-memory as installed, one root, Rootkeeper's
// state folder protected.
func BenchmarkWrapObserved(b *testing.B) {
	needLandlock(b)
	bin := apptest.NPMServer(b, "mcp-server-memory")
	state := filepath.Join(b.TempDir(), "a", "deep", "state", "folder")
	os.MkdirAll(state, 0o700)
	p := Policy{Roots: []string{b.TempDir()}, Temp: filepath.Join(b.TempDir(), "tmp"), Network: NetworkOff, Protect: []string{state}}
	for b.Loop() {
		cmd := exec.Command(bin)
		_, obs, err := WrapObserved(cmd, p)
		if err != nil {
			b.Fatal(err)
		}
		Forget(cmd)
		obs.Close()
	}
}
