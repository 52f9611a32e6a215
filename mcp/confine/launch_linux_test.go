package confine

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
	if before := threadsConfined(t); len(before) != 0 {
		t.Fatalf("threads confined before the start: %v", before)
	}
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	os.MkdirAll(root, 0o755)
	os.MkdirAll(outside, 0o755)
	secret := filepath.Join(outside, "secret.txt")
	os.WriteFile(secret, []byte("s"), 0o600)
	goFile := filepath.Join(root, "go")
	prog := nosy(t)
	cmd := exec.Command(prog, "-try", "read:/proc/self/status", "read:"+secret, "waitfor:"+goFile)
	_, obs, err := WrapObserved(cmd, Policy{Roots: []string{root}, Temp: filepath.Join(base, "tmp"), Network: NetworkOff})
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	obs.Start(func(context.Context, Attempt) string { return "" })
	defer obs.Close()
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
// network is off (nosy -try, which does nothing, to its end), from a
// confined thread of this process against the anchor, a re-execution of
// this program that confines itself and then runs the server; the two
// interleaved, medians reported with their ratio.
func BenchmarkStartInProcess(b *testing.B) {
	needLandlock(b)
	prog := nosy(b)
	p := Policy{Roots: []string{b.TempDir()}, Temp: filepath.Join(b.TempDir(), "tmp"), Network: NetworkOff}
	start := func(inProcess bool) time.Duration {
		launchInProcess = inProcess
		defer func() { launchInProcess = true }()
		began := time.Now()
		cmd := exec.Command(prog, "-try")
		_, obs, err := WrapObserved(cmd, p)
		if err != nil {
			b.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := Start(cmd); err != nil {
			b.Fatal(err)
		}
		obs.Start(nil)
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		obs.Close()
		return time.Since(began)
	}
	var reexec, inproc []time.Duration
	for i := 0; b.Loop(); i++ {
		for _, in := range []bool{i%2 == 0, i%2 != 0} {
			if d := start(in); in {
				inproc = append(inproc, d)
			} else {
				reexec = append(reexec, d)
			}
		}
	}
	r, in := apptest.Millis(apptest.Median(reexec)), apptest.Millis(apptest.Median(inproc))
	b.ReportMetric(r, "reexec-ms")
	b.ReportMetric(in, "inprocess-ms")
	b.ReportMetric(in/r, "ratio")
}
