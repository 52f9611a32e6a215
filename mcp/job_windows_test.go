//go:build windows

package mcp

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// The test binary plays the processes of these tests, chosen by
// RK_JOB_ROLE: "server" starts a "child" and prints its pid; "child" waits
// to be ended; "app" starts a "server" with StartServer and prints the
// server's pid and the child's. Each waits to be ended.
func init() {
	role := os.Getenv("RK_JOB_ROLE")
	if role == "" {
		return
	}
	switch role {
	case "server":
		child := helper("child")
		child.Stdout = os.Stdout
		if err := child.Start(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(child.Process.Pid)
	case "app":
		server := newCommand(os.Args[0], []string{"-test.run=^$"}, append(os.Environ(), "RK_JOB_ROLE=server"), "")
		out, err := server.StdoutPipe()
		if err == nil {
			err = StartServer(server)
		}
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		child, _ := bufio.NewReader(out).ReadString('\n')
		fmt.Println(server.Process.Pid, strings.TrimSpace(child))
	}
	// The role's lifetime, not a wait: the tests end it; a minute at most
	// if a test fails to, so that none is left behind.
	time.Sleep(time.Minute)
	os.Exit(0)
}

// helper is the test binary in role.
func helper(role string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RK_JOB_ROLE="+role)
	return cmd
}

// waitable opens process pid to wait for its end.
func waitable(t *testing.T, pid int) windows.Handle {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		t.Fatalf("process %d: %v", pid, err)
	}
	t.Cleanup(func() {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
		windows.CloseHandle(h)
	})
	return h
}

// ends reports whether the process ends within d.
func ends(h windows.Handle, d time.Duration) bool {
	ev, _ := windows.WaitForSingleObject(h, uint32(d/time.Millisecond))
	return ev == windows.WAIT_OBJECT_0
}

func pids(t *testing.T, line string, n int) []int {
	t.Helper()
	f := strings.Fields(line)
	if len(f) != n {
		t.Fatalf("want %d pids, got %q", n, line)
	}
	var out []int
	for _, s := range f {
		pid, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("want %d pids, got %q", n, line)
		}
		out = append(out, pid)
	}
	return out
}

// TestKillEndsWhatTheServerStarted: a server started by StartServer is a
// group with what it starts: Kill ends both, and the group is no longer
// alive.
func TestKillEndsWhatTheServerStarted(t *testing.T) {
	server := newCommand(os.Args[0], []string{"-test.run=^$"}, append(os.Environ(), "RK_JOB_ROLE=server"), "")
	out, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := StartServer(server); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	child := waitable(t, pids(t, line, 1)[0])
	g := Group(server.Process.Pid)
	if !g.Alive() {
		t.Fatal("the group of a running server is not alive")
	}
	g.Kill()
	if err := server.Wait(); err == nil {
		t.Error("the server exited well after Kill")
	}
	if !ends(child, 10*time.Second) {
		t.Fatal("the server's child outlived Kill")
	}
	if g.Alive() {
		t.Error("the group is alive with nothing left in it")
	}
	g.reap(time.Second)
	if _, held := jobs.byPID[int(g)]; held {
		t.Error("the job is still held after the group was reaped")
	}
}

// TestServersEndWithTheApp: the app killed outright (TerminateProcess, as
// Task Manager's End task does), its server and the server's child end
// too: Windows closes the app's handle to the job, which kills what is in
// it.
func TestServersEndWithTheApp(t *testing.T) {
	app := helper("app")
	out, err := app.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	p := pids(t, line, 2)
	server, child := waitable(t, p[0]), waitable(t, p[1])
	if ends(server, 0) || ends(child, 0) {
		t.Fatal("the server or its child ended before the app")
	}
	if err := app.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	app.Wait()
	if !ends(server, 10*time.Second) {
		t.Error("the server outlived the app")
	}
	if !ends(child, 10*time.Second) {
		t.Error("the server's child outlived the app")
	}
}
