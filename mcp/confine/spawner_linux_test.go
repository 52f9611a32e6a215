package confine

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"rootkeeper/app/apptest"
)

// onThreadThatEnds runs f on a goroutine locked to a thread other than
// the main one, which the runtime ends once f returns (a locked goroutine
// that returns takes its thread with it); it returns that thread's id.
func onThreadThatEnds(f func()) int {
	tid := make(chan int, 1)
	done := make(chan struct{})
	var run func()
	run = func() {
		runtime.LockOSThread() // never unlocked
		if unix.Gettid() == unix.Getpid() {
			// The main thread is not ended (it wedges instead): try again
			// from another goroutine, which cannot run on this thread
			// while it is locked.
			go run()
			<-done
			runtime.UnlockOSThread()
			return
		}
		tid <- unix.Gettid()
		f()
		close(done)
	}
	go run()
	id := <-tid
	<-done
	return id
}

// TestServerOutlivesTheThreadThatStartedIt: a server started by Start
// keeps running after the thread of the goroutine that asked ends. The
// kernel sends a child its death signal (Pdeathsig, which Rootkeeper sets
// for every server so that none outlives it) when the thread that forked
// it ends, not the process; and Go ends a thread whenever a goroutine
// locked to it returns (the confined launch's, an observer's). Started
// from whatever thread the asking goroutine ran on, servers were sent
// SIGTERM when an unrelated server of the same Rootkeeper stopped: in the
// survey, two or three servers of a run ended before answering, exit
// status 0 (their SIGTERM handlers) or a signal.
func TestServerOutlivesTheThreadThatStartedIt(t *testing.T) {
	cmd := exec.Command("cat")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var startErr error
	tid := onThreadThatEnds(func() { startErr = Start(cmd) })
	if startErr != nil {
		t.Fatal(startErr)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	apptest.Eventually(t, "the asking thread ended", func() (bool, string) {
		_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid))
		return os.IsNotExist(err), fmt.Sprintf("thread %d: %v", tid, err)
	})
	// The death signal, had it been sent, was sent as the thread ended.
	if _, err := io.WriteString(in, "still here\n"); err != nil {
		t.Fatalf("the server is gone once the thread that asked ended: %v", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "still here\n" {
		t.Fatalf("the server is gone once the thread that asked ended: read %q, %v (%v)", line, err, cmd.Wait())
	}
}
