package bridge

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/mcp"
	"rootkeeper/mcp/confine"
)

// processReport says where every process whose environment holds
// HOME=home is, and every process descended from one (Chromium's zygotes
// write their titles over their environment), thread by thread: its
// state, the kernel function it sleeps in and the system call it is in
// (/proc/PID/task/TID/{stat,wchan,syscall}).
// A survey server that stops answering is looked at with it before it is
// killed: a thread held by the observer sleeps in the seccomp notification
// (wchan seccomp_do_user_notification, its call's number first in
// syscall), one waiting for its own children in a futex or a poll.
func processReport(home string) string {
	want := []byte("HOME=" + home)
	dirs, _ := os.ReadDir("/proc")
	parent, ours := map[int]int{}, map[int]bool{}
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		pids = append(pids, pid)
		// The parent is the second field after the command's parentheses.
		if stat := procField(filepath.Join("/proc", d.Name()), "stat"); strings.LastIndexByte(stat, ')') > 0 {
			if f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:]); len(f) > 1 {
				parent[pid], _ = strconv.Atoi(f[1])
			}
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		ours[pid] = err == nil && slices.ContainsFunc(bytes.Split(env, []byte{0}), func(v []byte) bool { return bytes.Equal(v, want) })
	}
	descended := func(pid int) bool {
		for seen := 0; pid > 1 && seen < 64; seen++ {
			if ours[pid] {
				return true
			}
			pid = parent[pid]
		}
		return false
	}
	var b strings.Builder
	for _, pid := range pids {
		if !descended(pid) {
			continue
		}
		proc := filepath.Join("/proc", strconv.Itoa(pid))
		cmdline, _ := os.ReadFile(filepath.Join(proc, "cmdline"))
		line := strings.Join(strings.Fields(strings.ReplaceAll(string(cmdline), "\x00", " ")), " ")
		if len(line) > 160 {
			line = line[:160] + "…"
		}
		// Its first descriptors: which socket a thread reads is named there.
		var fds []string
		for fd := range 5 {
			if target, err := os.Readlink(filepath.Join(proc, "fd", strconv.Itoa(fd))); err == nil {
				fds = append(fds, fmt.Sprintf("%d=%s", fd, target))
			}
		}
		fmt.Fprintf(&b, "process %d (parent %d): %s\n  fds %s\n", pid, parent[pid], line, strings.Join(fds, " "))
		tasks, _ := os.ReadDir(filepath.Join(proc, "task"))
		for _, t := range tasks {
			dir := filepath.Join(proc, "task", t.Name())
			stat := procField(dir, "stat")
			// comm is in parentheses and may hold spaces; the state follows.
			comm, state := stat, ""
			if i, j := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')'); i >= 0 && j > i {
				comm = stat[i+1 : j]
				if f := strings.Fields(stat[j+1:]); len(f) > 0 {
					state = f[0]
				}
			}
			fmt.Fprintf(&b, "  thread %s %q %s wchan=%s syscall=%s\n", t.Name(), comm, state, procField(dir, "wchan"), procField(dir, "syscall"))
		}
	}
	if b.Len() == 0 {
		return "no process of HOME=" + home + " is left\n"
	}
	return b.String()
}

// chromiumLog is the file in the survey's project folder a browser
// server's Chromium logs to (--enable-logging --log-file): there, not in
// the profile, which the server removes with the browser it gives up on.
const chromiumLog = ".chromium.log"

// browserLogs is the end of the Chromium log in the project folder proj,
// for a failure's text: a browser that hangs at launch says nothing on
// the pipe its server reads.
func browserLogs(proj string) string {
	data, err := os.ReadFile(filepath.Join(proj, chromiumLog))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "the end of its Chromium log (%d lines):\n", len(lines))
	for _, line := range lines[max(0, len(lines)-60):] {
		b.WriteString("  " + line + "\n")
	}
	return b.String()
}

// procField is the trimmed content of the file name in dir, or why not.
func procField(dir, name string) string {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return strings.TrimSpace(string(data))
}

// TestProcessReportShowsAHeldCall: a confined process whose read past its
// folders the observer holds is reported sleeping in the seccomp
// notification, in openat, by the report a failed survey call prints.
func TestProcessReportShowsAHeldCall(t *testing.T) {
	if _, err := confine.ABI(); err != nil {
		t.Fatalf("Landlock: %v", err)
	}
	home, proj, state := t.TempDir(), t.TempDir(), t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(outside, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Named in its environment, not on its command line, where a file
	// would be a data file it may read.
	srv := app.Server{Name: "held", Type: app.TransportStdio, Command: "/bin/sh", Args: []string{"-c", `exec cat "$F"`}, Env: map[string]string{"HOME": home, "F": outside}, Confine: true}
	cmd, _ := mcp.StdioCommand(srv, &app.Snapshot{})
	_, obs, err := mcp.ObserveCommand(cmd, srv, []string{proj}, state)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	asked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	if err := mcp.StartServer(cmd); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer close(release)
	obs.Start(func(ctx context.Context, a confine.Attempt) string {
		if a.Path == outside {
			once.Do(func() { close(asked) })
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return ""
	})
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the read past its folders never reached the observer's Reach")
	}
	// The kernel may name the function with a suffix of its compiler's
	// (seccomp_do_user_notification.isra.0); and it says 0 for a task it
	// finds running, which a held one is for a moment (the observer's
	// receiving the call wakes it to sleep again, killable:
	// SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV). cat stays held until
	// released, so another look sees it held.
	want := regexp.MustCompile(fmt.Sprintf(`"cat" [SD] wchan=seccomp_do_user_notification\S* syscall=%d `, unix.SYS_OPENAT))
	var report string
	for range 5 {
		if report = processReport(home); want.MatchString(report) {
			break
		}
	}
	if !strings.Contains(report, fmt.Sprintf("process %d (parent %d): cat %s", cmd.Process.Pid, os.Getpid(), outside)) || !want.MatchString(report) {
		t.Errorf("report does not show cat held in its openat (%q):\n%s", want, report)
	}
	if got := processReport(t.TempDir()); !strings.HasPrefix(got, "no process") {
		t.Errorf("a home no process has: %s", got)
	}
}

// TestProcessReportFollowsChildren: a child whose environment no longer
// holds HOME (as Chromium's zygotes write their titles over it) is in the
// report because its parent is.
func TestProcessReportFollowsChildren(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command("sh", "-c", "env -i sleep 30 & wait")
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &unix.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { unix.Kill(-cmd.Process.Pid, unix.SIGKILL); cmd.Wait() }()
	var report string
	apptest.Eventually(t, "the child in the report", func() (bool, string) {
		report = processReport(home)
		return strings.Contains(report, fmt.Sprintf("(parent %d): sleep 30", cmd.Process.Pid)), report
	})
}
