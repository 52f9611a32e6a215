package gui

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// BenchmarkTrayAtScale measures what living in the tray costs at 1,000
// folders × 20 real servers, with nothing waiting for the person: the app
// started --hidden (as at login), idle once its servers are connected,
// against `rootkeeper headless` over a copy of the same state and the
// smallest Fyne window (gui/internal/hello), all measured over the same 20
// seconds. Then, five times each (the median is reported): a click on the
// tray's Open Rootkeeper until the window is on screen, and a host's
// request for a folder, written to the state file as a bridge writes it,
// until the window that asks it is on screen; the window is closed after
// each. Issue 22's goals: at most 5 ticks and 60 MB idle; each ≤ 1 s.
//
//	go test ./gui -run '^$' -bench TrayAtScale -benchtime 1x
func BenchmarkTrayAtScale(b *testing.B) {
	for b.Loop() {
		e := newScaleRunOf(b, 1000, 20, true)
		e.launch("", "--hidden")
		waitConnected(b, e.rk, e.state, 20, 60*time.Second)
		if _, up := processOf(e.rk, true); up {
			b.Fatal("a window came up at a hidden start with nothing to ask")
		}
		headless := startHeadless(b, e)
		hello := startHello(b, e.bin)
		time.Sleep(5 * time.Second) // the first sweep settles
		app0, headless0, hello0 := cpuTicks(b, e.pid), cpuTicks(b, headless), cpuTicks(b, hello)
		time.Sleep(20 * time.Second)
		b.ReportMetric(float64(cpuTicks(b, e.pid)-app0), "tray-ticks/20s")
		b.ReportMetric(float64(cpuTicks(b, headless)-headless0), "headless-ticks/20s")
		b.ReportMetric(float64(cpuTicks(b, hello)-hello0), "hello-ticks/20s")
		b.ReportMetric(float64(rssMB(b, e.pid, "VmRSS")), "tray-MB")
		b.ReportMetric(float64(rssMB(b, headless, "VmRSS")), "headless-MB")
		b.ReportMetric(float64(rssMB(b, hello, "VmRSS")), "hello-MB")

		// Mapped: the window is on the screen; drawn: the window says its
		// first snapshot (the rows of 1,000 folders), or the request's
		// dialog, came on screen.
		var mapped, opens, asks []time.Duration
		for range 5 {
			start, from := time.Now(), e.logSize()
			io.WriteString(e.stdin, "item Open Rootkeeper\n")
			mapped = append(mapped, e.untilWindow(start))
			opens = append(opens, e.untilLogged(start, from, "window on screen"))
			e.closeWindow()
		}
		for i := range 5 {
			start, from := time.Now(), e.logSize()
			addRequest(b, e.state, "server-1", fmt.Sprintf("/srv/asked-%d", i))
			asks = append(asks, e.untilLogged(start, from, "request on screen"))
			e.closeWindow()
		}
		b.ReportMetric(apptest.Median(mapped).Seconds(), "open-mapped-s")
		b.ReportMetric(apptest.Median(opens).Seconds(), "open-drawn-s")
		b.ReportMetric(slices.Max(opens).Seconds(), "open-drawn-max-s")
		b.ReportMetric(apptest.Median(asks).Seconds(), "ask-drawn-s")
		b.ReportMetric(slices.Max(asks).Seconds(), "ask-drawn-max-s")
		b.ReportMetric(0, "ns/op")
	}
}

// startHeadless runs `rootkeeper headless` over a copy of e's state until
// the test ends, waits for its servers, and returns its pid.
func startHeadless(t testing.TB, e *scaleRun) int {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-a", e.state+"/.", dir).CombinedOutput(); err != nil {
		t.Fatalf("copying the state: %v %s", err, out)
	}
	for _, f := range []string{"control.sock", "control.token", "display", "app.log"} {
		os.Remove(filepath.Join(dir, f))
	}
	cmd := exec.Command(e.rk, "--state-dir", dir, "headless")
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	waitConnected(t, e.rk, dir, 20, 60*time.Second)
	return cmd.Process.Pid
}

// untilWindow waits for a viewable window called Rootkeeper on the app's
// display, and returns how long after start it came (looked at every 10 ms
// at most, the measure's resolution).
func (e *scaleRun) untilWindow(start time.Time) time.Duration {
	e.t.Helper()
	var took time.Duration
	apptest.Poll{Every: 10 * time.Millisecond}.Eventually(e.t, "a window on screen", func() (bool, string) {
		took = time.Since(start)
		return e.windowViewable(), ""
	})
	return took
}

// logSize is how much the app (and its windows) have logged so far.
func (e *scaleRun) logSize() int64 {
	fi, err := os.Stat(filepath.Join(e.state, "app.log"))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// untilLogged waits for the log line msg="what" past offset from, and
// returns how long after start its time says it was written (the window
// logs what it drew: gui.Options.Log).
func (e *scaleRun) untilLogged(start time.Time, from int64, what string) time.Duration {
	e.t.Helper()
	want := `msg="` + what + `"`
	var took time.Duration
	apptest.Eventually(e.t, want+" in the log", func() (bool, string) {
		data, _ := os.ReadFile(filepath.Join(e.state, "app.log"))
		if int64(len(data)) <= from {
			return false, ""
		}
		for _, line := range strings.Split(string(data[from:]), "\n") {
			if !strings.Contains(line, want) {
				continue
			}
			stamp, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
			at, err := time.Parse(time.RFC3339Nano, stamp)
			if err != nil {
				e.t.Fatalf("log line %q: %v", line, err)
			}
			took = at.Sub(start)
			return true, ""
		}
		return false, ""
	})
	return took
}

// windowViewable reports whether a window called Rootkeeper is mapped.
func (e *scaleRun) windowViewable() bool {
	tree, err := e.xwininfo("-root", "-tree")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(tree, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || !strings.Contains(line, `"Rootkeeper"`) {
			continue
		}
		if info, err := e.xwininfo("-id", fields[0]); err == nil && strings.Contains(info, "Map State: IsViewable") {
			return true
		}
	}
	return false
}

func (e *scaleRun) xwininfo(args ...string) (string, error) {
	cmd := exec.Command("xwininfo", append([]string{"-display", e.display}, args...)...)
	out, err := cmd.Output()
	return string(out), err
}

// closeWindow closes the window as its close button does (the process
// ends), and waits until it is gone and the app has heard its link end.
func (e *scaleRun) closeWindow() {
	e.t.Helper()
	pid := waitProcess(e.t, e.rk, true)
	from := e.logSize()
	if p, err := os.FindProcess(pid); err == nil {
		p.Signal(syscall.SIGTERM) // os.Process, not syscall.Kill: the file builds for Windows too
	}
	apptest.Eventually(e.t, "the window process ended", func() (bool, string) {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return err != nil, ""
	})
	e.untilLogged(time.Now(), from, "the window's link ended")
}

// addRequest records a host's request for path, as a bridge does.
func addRequest(t testing.TB, state, server, path string) {
	t.Helper()
	core, err := app.NewCore(mustStore(t, state))
	if err != nil {
		t.Fatal(err)
	}
	err = core.Update(func(s *app.State) error {
		_, err := s.AddRequest(server, path, "bench", time.Now().UTC())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
