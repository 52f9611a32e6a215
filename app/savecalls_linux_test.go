//go:build linux && (amd64 || arm64)

package app

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime/trace"
	"strings"
	"testing"

	xtrace "golang.org/x/exp/trace"
)

// A save of the state on a local disk tells the scheduler of no system
// call (package filecall): each one made the ordinary way wakes the
// runtime's monitor thread when the app was idle, which then cost 25-30
// wakes and 0.15-0.2 ms of CPU a grant (BenchmarkGrantToServer's
// sysmon-wakes). The execution tracer records every call the scheduler is
// told of, with its stack; a read made the ordinary way in the same window
// shows that it would see one.
func TestASaveTellsTheSchedulerNothing(t *testing.T) {
	store, core := openCore(t)
	save := func(i int) {
		t.Helper()
		if err := core.Update(func(s *State) error {
			return s.AddServer(Server{Name: fmt.Sprintf("s%d", i), Type: TransportStdio, Command: "x"})
		}); err != nil {
			t.Fatal(err)
		}
	}
	save(0) // the first asks what the folder's file system is, and sets up the syncs
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		t.Fatalf("the execution tracer: %v (this test cannot run under go test -trace)", err)
	}
	for i := 1; i <= 20; i++ {
		save(i)
	}
	ordinaryRead(t, store.Dir())
	trace.Stop()

	told, control := scheduledCalls(t, &buf)
	if control == 0 {
		t.Fatal("the trace shows no call made the ordinary way, not even the control's read: it proves nothing")
	}
	for stack, n := range told {
		t.Errorf("%d system calls of saves went through the scheduler:\n\t%s", n, stack)
	}
}

// ordinaryRead reads the state file through os, whose calls the
// scheduler is told of.
func ordinaryRead(t *testing.T, dir string) {
	if _, err := os.ReadFile(dir + "/state.json"); err != nil {
		t.Fatal(err)
	}
}

// scheduledCalls reads the trace tr and returns the stacks of the system
// calls the scheduler was told of that were made for a save (under
// Core.Update), counted, and how many ordinaryRead made.
func scheduledCalls(t *testing.T, tr io.Reader) (saves map[string]int, control int) {
	r, err := xtrace.NewReader(tr)
	if err != nil {
		t.Fatal(err)
	}
	saves = map[string]int{}
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			return saves, control
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind() != xtrace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != xtrace.ResourceGoroutine {
			continue
		}
		if from, to := st.Goroutine(); to != xtrace.GoSyscall || from == xtrace.GoSyscall {
			continue
		}
		var frames []string
		for f := range st.Stack.Frames() {
			frames = append(frames, f.Func)
		}
		stack := strings.Join(frames, " < ")
		switch {
		case strings.Contains(stack, "app.ordinaryRead"):
			control++
		case strings.Contains(stack, "app.(*Core).Update"):
			saves[stack]++
		}
	}
}
