package confine

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rootkeeper/app/apptest"
)

// nosy builds testdata/nosy, the server that ignores its roots.
func nosy(t testing.TB) string { return apptest.Program(t, "mcp/confine/testdata/nosy") }

// needLandlock fails the test where Landlock is missing: the suite's
// machines have it, and a test that silently proved nothing would lie.
func needLandlock(t testing.TB) int {
	t.Helper()
	abi, err := ABI()
	if err != nil {
		t.Fatalf("ABI: %v", err)
	}
	return abi
}

type outcome struct {
	Op, Path, Err, Got string
	OK                 bool
}

// runNosy runs nosy -try with ops, confined by p unless p is nil, and
// returns its results in order.
func runNosy(t *testing.T, p *Policy, ops ...string) []outcome {
	t.Helper()
	cmd := exec.Command(nosy(t), append([]string{"-try"}, ops...)...)
	if p != nil {
		if _, err := Wrap(cmd, *p); err != nil {
			t.Fatalf("Wrap: %v", err)
		}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v; stderr: %s", cmd.Args, err, stderr.String())
	}
	var res []outcome
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var o outcome
		if err := dec.Decode(&o); err != nil {
			t.Fatalf("decoding %q: %v", out, err)
		}
		res = append(res, o)
	}
	if len(res) != len(ops) {
		t.Fatalf("got %d results for %d operations: %s", len(res), len(ops), out)
	}
	return res
}

// TestConfinedServerCannotReachPastItsRoots is the proof with a
// server that ignores roots: unconfined it reads, lists and writes outside
// its root (so the test can tell), confined it is denied all three, while
// its root and its private temp folder stay usable.
func TestConfinedServerCannotReachPastItsRoots(t *testing.T) {
	needLandlock(t)
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	temp := filepath.Join(base, "tmp", "nosy")
	for _, d := range []string{root, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "secret.txt")
	os.WriteFile(secret, []byte("s3cret"), 0o600)
	os.WriteFile(filepath.Join(root, "inside.txt"), []byte("hello"), 0o600)
	ops := []string{
		"read:" + secret, "list:" + outside, "write:" + filepath.Join(outside, "planted.txt"),
		"list:" + root, "read:" + filepath.Join(root, "inside.txt"), "write:" + filepath.Join(root, "new.txt"),
		"write:" + filepath.Join(temp, "scratch"),
	}
	os.MkdirAll(temp, 0o700)
	free := runNosy(t, nil, ops...)
	for _, o := range free {
		if !o.OK {
			t.Fatalf("unconfined %s %s failed (%s): the test cannot tell confinement apart", o.Op, o.Path, o.Err)
		}
	}
	os.Remove(filepath.Join(outside, "planted.txt"))
	os.Remove(filepath.Join(root, "new.txt"))

	got := runNosy(t, &Policy{Roots: []string{root}, Temp: temp}, ops...)
	for i, o := range got {
		inside := i >= 3
		switch {
		case inside && !o.OK:
			t.Errorf("confined %s %s inside its roots failed: %s", o.Op, o.Path, o.Err)
		case !inside && o.OK:
			t.Errorf("confined %s %s outside its roots succeeded (got %q)", o.Op, o.Path, o.Got)
		case !inside && !strings.Contains(o.Err, "permission denied"):
			t.Errorf("confined %s %s: want permission denied, got %q", o.Op, o.Path, o.Err)
		}
	}
	if got[3].Got != "inside.txt" || got[4].Got != "hello" {
		t.Errorf("confined list/read of its root: %q, %q", got[3].Got, got[4].Got)
	}
	if _, err := os.Stat(filepath.Join(outside, "planted.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the confined server planted a file outside its roots (%v)", err)
	}
}

// TestTempFolderIsTheServers checks that the private temp folder is
// created private and handed over as TMPDIR, TMP and TEMP, and that the
// shared /tmp is not reachable.
func TestTempFolderIsTheServers(t *testing.T) {
	needLandlock(t)
	temp := filepath.Join(t.TempDir(), "srv-tmp")
	cmd := exec.Command("/bin/sh", "-c", `echo "$TMPDIR $TMP $TEMP"; echo x > "$TMPDIR/f" && echo wrote; ls /tmp >/dev/null 2>&1 || echo denied-tmp`)
	abi, err := Wrap(cmd, Policy{Temp: temp})
	if err != nil {
		t.Fatal(err)
	}
	if abi < 1 {
		t.Fatalf("Wrap reported ABI %d", abi)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := temp + " " + temp + " " + temp + "\nwrote\ndenied-tmp\n"
	if string(out) != want {
		t.Errorf("output %q, want %q", out, want)
	}
	fi, err := os.Stat(temp)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("temp folder: %v, mode %v; want 0700", err, fi.Mode().Perm())
	}
}

// TestNoSpecNoExec: a __confine child without its ruleset refuses to run
// the server at all.
func TestNoSpecNoExec(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, verb, "--", "/bin/echo", "ran")
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 126 {
		t.Fatalf("err %v, want exit 126; output %s", err, out)
	}
	if strings.Contains(string(out), "ran") || !strings.Contains(string(out), "cannot confine") {
		t.Errorf("output %q", out)
	}
}

// TestExecFailureIsNamed: a server that cannot be executed once confined
// is reported as such, not as a confinement failure, and exits 126.
func TestExecFailureIsNamed(t *testing.T) {
	needLandlock(t)
	notExec := filepath.Join(t.TempDir(), "server")
	os.WriteFile(notExec, []byte("#!/bin/sh\necho ran\n"), 0o644)
	cmd := exec.Command(notExec)
	if _, err := Wrap(cmd, Policy{}); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 126 {
		t.Fatalf("err %v, want exit 126; output %s", err, out)
	}
	if !strings.Contains(string(out), "confined, but cannot execute "+notExec) || strings.Contains(string(out), "ran") {
		t.Errorf("output %q", out)
	}
}

// TestStateFolderInsideARootIsOutOfReach: a granted folder that holds the
// state folder (as the home folder holds ~/.config/rootkeeper) is usable,
// but the state folder's files can be neither read nor written, while the
// private temp folder inside it still can.
func TestStateFolderInsideARootIsOutOfReach(t *testing.T) {
	needLandlock(t)
	base := apptest.RealTempDir(t)
	state := filepath.Join(base, ".config", "rootkeeper")
	temp := filepath.Join(state, "tmp", "server-x")
	for _, d := range []string{temp, filepath.Join(base, "other"), filepath.Join(base, ".config", "app")} {
		os.MkdirAll(d, 0o700)
	}
	os.WriteFile(filepath.Join(state, "state.json"), []byte(`{"decisions":[]}`), 0o600)
	os.WriteFile(filepath.Join(base, "top.txt"), []byte("top"), 0o600)
	os.WriteFile(filepath.Join(base, ".config", "app", "settings"), []byte("s"), 0o600)
	// A symlink in the root to a folder outside it must not become a grant.
	elsewhere := t.TempDir()
	os.WriteFile(filepath.Join(elsewhere, "far.txt"), []byte("far"), 0o600)
	os.Symlink(elsewhere, filepath.Join(base, "link"))
	p := &Policy{Roots: []string{base}, Temp: temp, Protect: []string{state}}
	got := runNosy(t, p,
		"read:"+filepath.Join(base, "top.txt"), "list:"+base, "write:"+filepath.Join(base, "other", "new"),
		"write:"+filepath.Join(base, "top.txt"), "read:"+filepath.Join(base, ".config", "app", "settings"),
		"write:"+filepath.Join(temp, "scratch"),
		"read:"+filepath.Join(state, "state.json"), "write:"+filepath.Join(state, "state.json"),
		"write:"+filepath.Join(state, "planted"), "read:"+filepath.Join(base, "link", "far.txt"))
	for i, o := range got {
		if want := i < 6; o.OK != want {
			t.Errorf("%s %s: ok=%v (%s), want %v", o.Op, o.Path, o.OK, o.Err, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(state, "state.json")); string(b) != `{"decisions":[]}` {
		t.Errorf("state.json became %q", b)
	}
	// A root inside the state folder is not granted at all.
	if r := carve(filepath.Join(state, "tmp"), []string{state}); len(r) != 0 {
		t.Errorf("a root inside the state folder: %v", r)
	}
}
