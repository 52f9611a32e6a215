package confine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"rootkeeper/app/apptest"
)

// holesSetup is a confined server's world: root (its folder, read-write,
// with mine.txt), ro (read-only to it, with file), secret (not its own,
// with a.txt), and its data folder inside a protected state folder.
type holesWorld struct {
	root, ro, secret, state, data string
	policy                        Policy
}

func holesSetup(t *testing.T) holesWorld {
	t.Helper()
	needLandlock(t)
	base := apptest.RealTempDir(t)
	w := holesWorld{
		root:   filepath.Join(base, "root"),
		ro:     filepath.Join(base, "ro"),
		secret: filepath.Join(base, "secret"),
		state:  filepath.Join(base, "state"),
	}
	w.data = filepath.Join(w.state, "data", "nosy")
	for _, d := range []string{w.root, w.ro, w.secret, w.data, filepath.Join(w.root, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for f, body := range map[string]string{
		filepath.Join(w.root, "mine.txt"):    "mine",
		filepath.Join(w.root, "a.txt"):       "a",
		filepath.Join(w.ro, "file"):          "read-only",
		filepath.Join(w.secret, "a.txt"):     "secret a",
		filepath.Join(w.data, "graph.json"):  "{}",
		filepath.Join(w.state, "state.json"): "{}",
	} {
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.policy = Policy{Roots: []string{w.root}, ReadOnly: []string{w.ro}, Temp: filepath.Join(base, "tmp"), Data: w.data, Protect: []string{w.state}}
	return w
}

// unchanged fails the test when a file's content is not body any more.
func unchanged(t *testing.T, path, body string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != body {
		t.Errorf("%s: %q (%v), want %q", path, b, err, body)
	}
}

func refusedWith(t *testing.T, o outcome, errs ...string) {
	t.Helper()
	if o.OK {
		t.Errorf("%s %s succeeded", o.Op, o.Path)
		return
	}
	for _, e := range errs {
		if strings.Contains(o.Err, e) {
			return
		}
	}
	t.Errorf("%s %s: %q, want one of %q", o.Op, o.Path, o.Err, errs)
}

// TestHolesObserved: the calls that got past the boundary before the
// allowlist, made by an observed confined server at the running Landlock
// ABI (CI runs this at every ABI from 1: ROOTKEEPER_LANDLOCK_ABI). Nothing
// outside its read-write folders is emptied, watched, marked or changed
// through another ABI, and what it may do in its folders (its data folder
// in Rootkeeper's state folder included) still works.
func TestHolesObserved(t *testing.T) { holesObserved(t, "") }

// TestHolesObservedFromAThread: the same for a server whose network is
// off, which starts from a confined thread of Rootkeeper's own (no
// re-exec): the same boundary.
func TestHolesObservedFromAThread(t *testing.T) { holesObserved(t, NetworkOff) }

func holesObserved(t *testing.T, network string) {
	w := holesSetup(t)
	w.policy.Network = network
	abi := needLandlock(t)
	ro, secretA, mine := filepath.Join(w.ro, "file"), filepath.Join(w.secret, "a.txt"), filepath.Join(w.root, "mine.txt")
	graph := filepath.Join(w.data, "graph.json")
	flagsBefore := attrFlags(t, secretA)
	ops := []string{
		"rdtrunc:" + ro, "rdtrunc:" + secretA, // 0, 1
		"truncpath:" + ro, "truncpath:" + secretA, "truncpath:" + mine, // 2, 3, 4
		"watch:" + w.secret, "watch:" + w.root, // 5, 6
		"setattr:" + secretA, "setattr:" + mine, "setversion:" + ro, // 7, 8, 9
		"int80chmod:" + secretA, "x32chmod:" + secretA, // 10, 11
		"iouring:", "syscall:600", "syscall:469", "listener:", // 12, 13, 14, 15
		"mknodblk:" + filepath.Join(w.root, "disk"), // 16
		"chmod:" + graph, "utimes:" + graph, "setxattr:" + graph, // 17, 18, 19
		"chmod:" + filepath.Join(w.state, "state.json"), // 20
	}
	var mu sync.Mutex
	asked := map[string]string{}
	res, _ := runObserved(t, w.policy, func(_ context.Context, a Attempt) string {
		mu.Lock()
		asked[a.Path] += a.Op + ","
		mu.Unlock()
		return "" // nobody allows anything
	}, ops...)

	refusedWith(t, res[0], "permission denied")
	refusedWith(t, res[1], "permission denied")
	unchanged(t, ro, "read-only")
	unchanged(t, secretA, "secret a")
	refusedWith(t, res[2], "permission denied")
	refusedWith(t, res[3], "permission denied")
	if !res[4].OK {
		t.Errorf("truncate of its own file: %+v", res[4])
	}
	unchanged(t, mine, "")
	if !strings.Contains(asked[secretA], "truncate") {
		t.Errorf("the truncate of %s was not asked about as a truncate: %q", secretA, asked[secretA])
	}
	if abi >= 3 && strings.Contains(asked[secretA], "read") {
		t.Errorf("an open that empties %s was asked about as a read: %q", secretA, asked[secretA])
	}
	refusedWith(t, res[5], "permission denied")
	if !strings.Contains(asked[w.secret], "watch") {
		t.Errorf("the watch on %s was not asked about: %q", w.secret, asked)
	}
	if !res[6].OK {
		t.Errorf("a watch on its own folder: %+v", res[6])
	}
	for _, o := range res[7:12] {
		refusedWith(t, o, "operation not permitted")
	}
	if got := attrFlags(t, secretA); got != flagsBefore {
		t.Errorf("%s's attribute flags changed: %#x, were %#x", secretA, got, flagsBefore)
	}
	if st := modeOf(t, secretA); st != 0o644 {
		t.Errorf("%s's mode changed through another ABI: %o", secretA, st)
	}
	refusedWith(t, res[12], "operation not permitted")
	refusedWith(t, res[13], "function not implemented")
	refusedWith(t, res[14], "operation not permitted")
	refusedWith(t, res[15], "operation not permitted")
	refusedWith(t, res[16], "permission denied", "operation not permitted")
	if _, err := os.Lstat(filepath.Join(w.root, "disk")); err == nil {
		t.Error("a device node was made in its folder")
	}
	for _, o := range res[17:20] {
		if !o.OK {
			t.Errorf("%s in its own data folder: %+v", o.Op, o)
		}
	}
	refusedWith(t, res[20], "operation not permitted")
	if runtime.GOARCH == "amd64" && !strings.Contains(res[10].Err, "operation not permitted") {
		t.Errorf("int 0x80 chmod: %+v", res[10])
	}
}

// TestHolesUnobserved: confined without an observer, what the observer
// would do or check is refused instead: a file's metadata, a watch, and
// below Landlock ABI 3 a truncate by name; the rest holds as observed.
func TestHolesUnobserved(t *testing.T) {
	w := holesSetup(t)
	ro, mine := filepath.Join(w.ro, "file"), filepath.Join(w.root, "mine.txt")
	res := runNosy(t, &w.policy, "truncpath:"+ro, "rdtrunc:"+ro, "watch:"+w.root, "chmod:"+mine, "setattr:"+mine, "iouring:", "syscall:600")
	refusedWith(t, res[0], "permission denied", "operation not permitted")
	refusedWith(t, res[1], "permission denied")
	unchanged(t, ro, "read-only")
	refusedWith(t, res[2], "operation not permitted")
	refusedWith(t, res[3], "operation not permitted")
	refusedWith(t, res[4], "operation not permitted")
	refusedWith(t, res[5], "operation not permitted")
	refusedWith(t, res[6], "function not implemented")
	if modeOf(t, mine) != 0o644 {
		t.Error("an unobserved server changed a file's mode")
	}
}

// TestHolesRaces: a server swaps a link in its own folder between its own
// file (or folder) and one it may only read (or a secret folder) while
// another of its threads truncates (or watches) through the link. The
// observer checks and acts on the same file, so at no ABI is the
// read-only file ever emptied or the secret folder watched, however the
// race falls.
func TestHolesRaces(t *testing.T) {
	for _, network := range []string{"", NetworkOff} {
		t.Run("network "+network, func(t *testing.T) { holesRaces(t, network) })
	}
}

func holesRaces(t *testing.T, network string) {
	w := holesSetup(t)
	w.policy.Network = network
	link := filepath.Join(w.root, "link")
	ro := filepath.Join(w.ro, "file")
	res, _ := runObserved(t, w.policy, func(context.Context, Attempt) string { return "" },
		"truncrace:"+strings.Join([]string{link, filepath.Join(w.root, "a.txt"), ro, "3000"}, ","),
		"watchrace:"+strings.Join([]string{link + "2", filepath.Join(w.root, "sub"), w.secret, "3000"}, ","),
	)
	unchanged(t, ro, "read-only")
	if !res[0].OK || res[0].Got == "truncated 0" {
		t.Errorf("the truncate race never truncated its own file (no race ran): %+v", res[0])
	}
	// inotify lists inodes in hexadecimal.
	want := fmt.Sprintf("watches 1 inodes %x", inode(t, filepath.Join(w.root, "sub")))
	if res[1].Got != want {
		t.Errorf("the watch race: %q, want %q (its own folder, %s %x)", res[1].Got, want, w.secret, inode(t, w.secret))
	}
}

// attrFlags are a file's attribute flags (lsattr).
func attrFlags(t *testing.T, path string) int {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	v, err := unix.IoctlGetInt(fd, unix.FS_IOC_GETFLAGS)
	if err != nil {
		t.Fatalf("FS_IOC_GETFLAGS %s: %v", path, err)
	}
	return v
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

func modeOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}
