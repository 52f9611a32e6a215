package confine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// runObserved runs nosy -try with ops, confined by p and observed, with
// reach told every attempt; it returns nosy's results and the attempts.
func runObserved(t *testing.T, p Policy, reach Reach, ops ...string) ([]outcome, []Attempt) {
	t.Helper()
	cmd := exec.Command(nosy(t), append([]string{"-try"}, ops...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	reach, seen := recorded(reach)
	obs := observed(t, cmd, p, nil, reach)
	err := cmd.Wait()
	obs.Close()
	if err != nil {
		t.Fatalf("%v: %v; stderr: %s", cmd.Args, err, stderr.String())
	}
	res := outcomes(t, &stdout)
	if len(res) != len(ops) {
		t.Fatalf("got %d results for %d operations: %v", len(res), len(ops), res)
	}
	return res, seen()
}

// TestObserverSeesReachAndHandsOnce: a confined, observed server that
// reads, lists and writes outside its root is seen doing so (path resolved,
// operation named), nothing inside its roots is reported, Landlock still
// refuses what Reach lets go on, and what Reach allows once succeeds in the
// same process, beneath the folder only.
func TestObserverSeesReachAndHandsOnce(t *testing.T) {
	needLandlock(t)
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	other := filepath.Join(base, "other")
	for _, d := range []string{root, outside, other} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(outside, "a.txt"), []byte("A"), 0o600)
	os.WriteFile(filepath.Join(other, "b.txt"), []byte("B"), 0o600)
	os.WriteFile(filepath.Join(root, "in.txt"), []byte("in"), 0o600)
	p := Policy{Roots: []string{root}, Temp: filepath.Join(base, "tmp")}

	// Allow once whatever is beneath outside, and nothing else.
	reach := func(_ context.Context, a Attempt) string {
		if strings.HasPrefix(a.Path, outside+"/") || a.Path == outside {
			return outside
		}
		return ""
	}
	res, seen := runObserved(t, p, reach,
		"read:"+filepath.Join(root, "in.txt"),
		"read:"+filepath.Join(other, "b.txt"),
		"read:"+filepath.Join(outside, "a.txt"),
		"list:"+outside,
		"write:"+filepath.Join(outside, "new.txt"),
		"read:"+filepath.Join(outside, "..", "other", "b.txt"),
	)
	if !res[0].OK || res[0].Got != "in" {
		t.Errorf("inside its root: %+v", res[0])
	}
	if res[1].OK || !strings.Contains(res[1].Err, "permission denied") {
		t.Errorf("let go on outside: want permission denied, got %+v", res[1])
	}
	if !res[2].OK || res[2].Got != "A" {
		t.Errorf("read allowed once: %+v", res[2])
	}
	if !res[3].OK || !strings.Contains(res[3].Got, "a.txt") {
		t.Errorf("list allowed once: %+v", res[3])
	}
	if !res[4].OK {
		t.Errorf("write allowed once: %+v", res[4])
	} else if b, _ := os.ReadFile(filepath.Join(outside, "new.txt")); string(b) != "nosy was here\n" {
		t.Errorf("written once: %q", b)
	}
	if res[5].OK {
		t.Errorf("a path through .. out of the folder allowed once was opened: %+v", res[5])
	}
	want := map[string]string{
		filepath.Join(other, "b.txt"):     "read",
		filepath.Join(outside, "a.txt"):   "read",
		outside:                           "list",
		filepath.Join(outside, "new.txt"): "create",
	}
	got := map[string]string{}
	for _, a := range seen {
		if strings.HasPrefix(a.Path, root) {
			t.Errorf("an access inside its root was reported: %+v", a)
		}
		got[a.Path] = a.Op
	}
	for path, op := range want {
		if got[path] != op {
			t.Errorf("attempt on %s: got op %q, want %q (all: %+v)", path, got[path], op, seen)
		}
	}
}

// benchOpens runs nosy reading 1,000 files inside its root, confined, with
// observation or without: the cost of a notification per open.
func benchOpens(b *testing.B, observe bool) { benchOps(b, "read", 0, observe) }

// benchOps runs nosy doing op on 1,000 files inside its root, confined,
// with observation or without, each after gap µs of work on the CPU
// (none for 0).
func benchOps(b *testing.B, op string, gap int, observe bool) {
	abi, err := ABI()
	if err != nil {
		b.Fatal(err)
	}
	_ = abi
	root := b.TempDir()
	var ops []string
	for i := range 1000 {
		f := filepath.Join(root, "f"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+".txt")
		os.WriteFile(f, []byte("x"), 0o600)
		if gap > 0 {
			ops = append(ops, "busy:"+strconv.Itoa(gap))
		}
		ops = append(ops, op+":"+f)
	}
	prog := nosy(b)
	p := Policy{Roots: []string{root}, Temp: filepath.Join(b.TempDir(), "tmp")}
	// Rootkeeper's own CPU a call: what observing costs beside the
	// server's wait (the loop's, the runtime's).
	before := apptest.SelfCPU()
	defer func() {
		used := apptest.SelfCPU() - before
		b.ReportMetric(float64(used.Microseconds())/float64(b.N*1000), "rootkeeper-cpu-µs/call")
	}()
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(prog, append([]string{"-try"}, ops...)...)
		var obs *Observer
		if observe {
			_, obs, err = WrapObserved(cmd, p)
		} else {
			_, err = Wrap(cmd, p)
		}
		if err != nil {
			b.Fatal(err)
		}
		cmd.Stdout = nil
		if err := Start(cmd); err != nil {
			b.Fatal(err)
		}
		if obs != nil {
			obs.Start(func(context.Context, Attempt) string { return "" })
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		if obs != nil {
			obs.Close()
		}
	}
}

// BenchmarkOpens1000 compares 1,000 opens inside the roots of a confined
// server without observation (the anchor) and with it.
func BenchmarkOpens1000(b *testing.B) {
	b.Run("confined", func(b *testing.B) { benchOpens(b, false) })
	b.Run("observed", func(b *testing.B) { benchOpens(b, true) })
}

// BenchmarkSpacedOpens1000 is BenchmarkOpens1000 with 100 µs of work on
// the CPU before each open, as a server's start spaces them (Node's
// require: half the gaps between observed calls are over 50 µs): the
// observer waits between calls, which is where waiting in a system call
// of its own woke the runtime's monitor thread for each (receive_linux.go).
// ns/op against the confined run's is what observing adds to the server's
// time, rootkeeper-cpu-µs/call what it costs Rootkeeper.
func BenchmarkSpacedOpens1000(b *testing.B) {
	b.Run("confined", func(b *testing.B) { benchOps(b, "read", 100, false) })
	b.Run("observed", func(b *testing.B) { benchOps(b, "read", 100, true) })
}

// BenchmarkChmods1000 compares 1,000 chmods of files inside the roots of a
// confined server without observation (the anchor: the filter refuses
// each in the kernel, as nobody could check them) and with it (the
// observer does each one itself, meta_linux.go).
func BenchmarkChmods1000(b *testing.B) {
	b.Run("confined", func(b *testing.B) { benchOps(b, "chmod", 0, false) })
	b.Run("observed", func(b *testing.B) { benchOps(b, "chmod", 0, true) })
}

// TestObserverNeverHandsAProtectedFile: even where Reach allows a folder
// once, a file in a protected folder beneath it (Rootkeeper's state) is
// not handed over.
func TestObserverNeverHandsAProtectedFile(t *testing.T) {
	needLandlock(t)
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	state := filepath.Join(outside, "state")
	os.MkdirAll(root, 0o755)
	os.MkdirAll(state, 0o700)
	os.WriteFile(filepath.Join(state, "state.json"), []byte("{}"), 0o600)
	os.WriteFile(filepath.Join(outside, "ok.txt"), []byte("ok"), 0o600)
	p := Policy{Roots: []string{root}, Temp: filepath.Join(base, "tmp"), Protect: []string{state}}
	res, _ := runObserved(t, p, func(context.Context, Attempt) string { return outside },
		"read:"+filepath.Join(outside, "ok.txt"), "read:"+filepath.Join(state, "state.json"))
	if !res[0].OK {
		t.Errorf("allowed once: %+v", res[0])
	}
	if res[1].OK || !strings.Contains(res[1].Err, "permission denied") {
		t.Errorf("a protected file was handed over: %+v", res[1])
	}
}

// TestObserverResolvesRelativePaths: a path relative to the working folder
// and one relative to a directory descriptor are reported absolute; a
// mkdir is reported as one that cannot be handed a descriptor; an openat
// through a descriptor can be allowed once.
func TestObserverResolvesRelativePaths(t *testing.T) {
	needLandlock(t)
	base, root, outside := rootAndOutside(t)
	os.WriteFile(filepath.Join(outside, "a.txt"), []byte("A"), 0o600)
	p := Policy{Roots: []string{root}, Temp: filepath.Join(base, "tmp")}
	ops := []string{"read:a.txt", "readat:" + filepath.Join(outside, "a.txt"), "mkdir:" + filepath.Join(outside, "new")}
	run := func(reach Reach) ([]outcome, []Attempt) {
		cmd := exec.Command(nosy(t), append([]string{"-try"}, ops...)...)
		cmd.Dir = outside
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		reach, seen := recorded(reach)
		obs := observed(t, cmd, p, nil, reach)
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		obs.Close()
		return outcomes(t, &stdout), seen()
	}
	res, seen := run(func(context.Context, Attempt) string { return "" })
	for _, r := range res {
		if r.OK {
			t.Errorf("let go on: %+v succeeded", r)
		}
	}
	want := []Attempt{
		{Op: "read", Path: filepath.Join(outside, "a.txt"), CanHand: true},
		{Op: "read", Path: filepath.Join(outside, "a.txt"), CanHand: true},
		{Op: "mkdir", Path: filepath.Join(outside, "new"), Why: "a folder cannot be made for it once"},
	}
	var got []Attempt
	for _, a := range seen {
		if strings.HasPrefix(a.Path, outside) {
			a.PID = 0
			got = append(got, a)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("attempts %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("attempt %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	res, _ = run(func(context.Context, Attempt) string { return outside })
	if !res[0].OK || res[0].Got != "A" || !res[1].OK || res[1].Got != "A" {
		t.Errorf("allowed once, relative and through a descriptor: %+v, %+v", res[0], res[1])
	}
	if res[2].OK {
		t.Errorf("a mkdir was allowed by a descriptor it cannot be handed: %+v", res[2])
	}
}

// TestObserverCloseWhileWaitingForTheListener: Close returns even while
// the listener has not come (the child's end of the socket still open
// somewhere), rather than wait for ever.
func TestObserverCloseWhileWaitingForTheListener(t *testing.T) {
	needLandlock(t)
	cmd := exec.Command(nosy(t), "-try")
	_, obs, err := WrapObserved(cmd, Policy{Temp: filepath.Join(t.TempDir(), "tmp")})
	if err != nil {
		t.Fatal(err)
	}
	held, err := obs.child.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var dup int
	held.Control(func(fd uintptr) { dup, err = unix.Dup(int(fd)) })
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dup)
	if err := obs.Start(func(context.Context, Attempt) string { return "" }); err != nil {
		t.Fatal(err)
	}
	obs.Close() // the test's own timeout catches a Close that waits
}

// TestObserverCloseWhileTheServerRuns: Close ends observing while the
// server still runs (it waits for a file that never comes), rather than
// wait for it to end.
func TestObserverCloseWhileTheServerRuns(t *testing.T) {
	needLandlock(t)
	root := t.TempDir()
	cmd := exec.Command(nosy(t), "-try", "waitfor:"+filepath.Join(root, "never"))
	_, obs, err := WrapObserved(cmd, Policy{Roots: []string{root}, Temp: filepath.Join(t.TempDir(), "tmp")})
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() { cmd.Process.Kill(); <-exited }()
	if err := obs.Start(func(context.Context, Attempt) string { return "" }); err != nil {
		t.Fatal(err)
	}
	// Its watch on the folder is a call the observer answers.
	apptest.Eventually(t, "the server's watch seen", func() (bool, string) {
		return obs.Seen() > 0, fmt.Sprintf("%d calls seen", obs.Seen())
	})
	obs.Close() // the test's own timeout catches a Close that waits
	select {
	case <-exited:
		t.Fatal("the server ended: Close was not tried while it ran")
	default:
	}
}

// TestObserverHandsOnlyWhatWasAsked: a read through openat2 with a
// harmless resolve flag is handed like any read, one whose resolve flags
// cannot be repeated (RESOLVE_IN_ROOT) is not handed and says why; and no
// call changes the mode, owner, extended attributes, attribute flags or
// times of a file outside the server's read-write folders, through a
// descriptor handed for a read or by its path, while the same calls work
// on its own files.
func TestObserverHandsOnlyWhatWasAsked(t *testing.T) {
	needLandlock(t)
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		os.MkdirAll(d, 0o755)
	}
	a, c := filepath.Join(outside, "a.txt"), filepath.Join(outside, "c.txt")
	mine := filepath.Join(root, "mine.txt")
	for _, f := range []string{a, c, mine} {
		os.WriteFile(f, []byte("A"), 0o600)
	}
	type meta struct {
		mode     os.FileMode
		uid, gid uint32
		mtime    int64
		xattr    bool
	}
	metaOf := func(path string) meta {
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		_, err := unix.Getxattr(path, "user.nosy", nil)
		return meta{os.FileMode(st.Mode & 0o7777), st.Uid, st.Gid, st.Mtim.Sec, err == nil}
	}
	beforeA, beforeC := metaOf(a), metaOf(c)

	// Allow once everything beneath outside, as a person answering each
	// call would.
	reach := func(_ context.Context, at Attempt) string {
		if app.IsWithin(at.Path, outside) {
			return outside
		}
		return ""
	}
	ops := []string{
		"openat2:" + a, "openat2root:" + a,
		"fchmod:" + a, "fchown:" + a, "fsetxattr:" + a, "futimens:" + a, "chattr:" + a, "chmodproc:" + a,
		"chmod:" + c, "chown:" + c, "setxattr:" + c, "utimes:" + c,
		"chmod:" + mine, "fsetxattr:" + mine, "utimes:" + mine,
	}
	res, seen := runObserved(t, Policy{Roots: []string{root}, Temp: filepath.Join(base, "tmp")}, reach, ops...)
	byOp := map[string]outcome{}
	for i, r := range res {
		byOp[ops[i]] = r
	}
	abi, _ := ABI()
	switch {
	case abi < 3:
		// Below Landlock ABI 3 the filter answers openat2 with ENOSYS (its
		// flags could ask to truncate, out of its sight): libc uses openat.
		for _, op := range ops[:2] {
			if r := byOp[op]; r.OK || !strings.Contains(r.Err, "function not implemented") {
				t.Errorf("%s at ABI %d: want ENOSYS, got %+v", op, abi, r)
			}
		}
	default:
		if r := byOp["openat2:"+a]; !r.OK || r.Got != "A" {
			t.Errorf("openat2 with RESOLVE_NO_MAGICLINKS allowed once: %+v", r)
		}
		if r := byOp["openat2root:"+a]; r.OK {
			t.Errorf("openat2 with RESOLVE_IN_ROOT was handed a file: %+v", r)
		}
		var inRoot *Attempt
		for i := range seen {
			if seen[i].Path == a && !seen[i].CanHand {
				inRoot = &seen[i]
			}
		}
		if inRoot == nil || !strings.Contains(inRoot.Why, "resolve") {
			t.Errorf("the RESOLVE_IN_ROOT attempt does not say why it cannot be handed: %+v", seen)
		}
	}
	for _, op := range ops[2:12] {
		r := byOp[op]
		// A path through /proc/self is refused before it resolves (a
		// magic link, ELOOP); the rest find the file out of reach (EPERM).
		if r.OK || !strings.Contains(r.Err, "operation not permitted") && !strings.HasPrefix(op, "chmodproc:") {
			t.Errorf("%s outside its folders: want EPERM, got %+v", op, r)
		}
	}
	if got := metaOf(a); got != beforeA {
		t.Errorf("a.txt, handed for reads, changed: %+v, was %+v", got, beforeA)
	}
	if got := metaOf(c); got != beforeC {
		t.Errorf("c.txt, named by path, changed: %+v, was %+v", got, beforeC)
	}
	for _, op := range ops[12:] {
		if r := byOp[op]; !r.OK {
			t.Errorf("%s on its own file: %+v", op, r)
		}
	}
	if got := metaOf(mine); got.mode != 0o777 || got.mtime != 1 || !got.xattr {
		t.Errorf("its own file after chmod, utimes and setxattr: %+v", got)
	}
}

// TestObserverSeesExecsFromEitherStart: a confined server that runs a
// program past its folders is seen doing so, however it was started: from
// a confined thread of Rootkeeper's (its network off) or through the
// confining child (a network of its own). Its own exec was answered by the
// thread that serves the launch (firstexec_cgo_linux.go) and is not told;
// a program inside its root runs, unasked; Landlock refuses the other.
func TestObserverSeesExecsFromEitherStart(t *testing.T) {
	needLandlock(t)
	if !answersFirstExec {
		t.Fatal("built without cgo: a server started from a thread runs its programs unseen")
	}
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	script := "#!/bin/sh\necho ran\n"
	for _, d := range []string{root, outside} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "run.sh"), []byte(script), 0o755)
	}
	for _, from := range []string{"a thread", "the confining child"} {
		t.Run(from, func(t *testing.T) {
			launchInProcess = from == "a thread"
			defer func() { launchInProcess = true }()
			p := Policy{Roots: []string{root}, Temp: filepath.Join(t.TempDir(), "tmp"), Network: NetworkOff}
			cmd := exec.Command(nosy(t), "-try", "exec:"+filepath.Join(root, "run.sh"), "exec:"+filepath.Join(outside, "run.sh"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			reach, seen := recorded(func(context.Context, Attempt) string { return "" })
			obs := observed(t, cmd, p, nil, reach)
			if (obs.inprocess != nil) != launchInProcess {
				t.Fatalf("started from a thread: %v, want %v", obs.inprocess != nil, launchInProcess)
			}
			err := cmd.Wait()
			obs.Close()
			if err != nil {
				t.Fatalf("%v; stderr: %s", err, stderr.String())
			}
			res := outcomes(t, &stdout)
			if len(res) != 2 || !res[0].OK || res[0].Got != "ran" {
				t.Fatalf("a program in its root: %+v", res)
			}
			if res[1].OK || !strings.Contains(res[1].Err, "permission denied") {
				t.Errorf("a program past its folders: %+v, want permission denied", res[1])
			}
			var execs []string
			for _, a := range seen() {
				if a.Op == app.OpExecute {
					execs = append(execs, a.Path)
				}
			}
			if want := filepath.Join(outside, "run.sh"); len(execs) != 1 || execs[0] != want {
				t.Errorf("programs told to Reach: %q, want only %s", execs, want)
			}
		})
	}
}
