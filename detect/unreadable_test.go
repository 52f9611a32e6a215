//go:build unix

package detect

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// childResult is what TestUnreadableChild prints for TestUnreadable.
type childResult struct {
	Found      []string
	Unreadable []string
	RootErr    string
}

const childEnv = "DETECT_UNREADABLE_ROOT"

// TestUnreadable scans a tree with a chmod 000 folder and a folder that can
// be listed but not entered. Root reads such folders anyway, so as root the
// scan runs in a copy of the test binary under setpriv as nobody.
func TestUnreadable(t *testing.T) {
	base, err := os.MkdirTemp("", "detect-unreadable-")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "root")
	t.Cleanup(func() {
		filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			os.Chmod(p, 0o755)
			return nil
		})
		os.Chmod(filepath.Join(root, "locked"), 0o755)
		os.Chmod(filepath.Join(root, "noexec"), 0o755)
		os.RemoveAll(base)
	})
	write(t, filepath.Join(root, "ok", "go.mod"), "")
	write(t, filepath.Join(root, "locked", "go.mod"), "")
	write(t, filepath.Join(root, "locked", "inner", "go.mod"), "")
	write(t, filepath.Join(root, "noexec", "sub", "go.mod"), "")
	write(t, filepath.Join(root, "z", "late", "go.mod"), "")
	if err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, 0o644)
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "noexec"), 0o644); err != nil {
		t.Fatal(err)
	}

	var res childResult
	if os.Geteuid() != 0 {
		res = scanUnreadable(t, root)
	} else {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root without setpriv to drop privileges")
		}
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(base, "detect.test")
		data, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
			bin, "-test.run=^TestUnreadableChild$", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"="+root)
		cmd.Dir = base
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		_, js, ok := strings.Cut(string(out), "RESULT ")
		if !ok {
			t.Fatalf("child printed no result:\n%s", out)
		}
		js, _, _ = strings.Cut(js, "\n")
		if err := json.Unmarshal([]byte(js), &res); err != nil {
			t.Fatalf("child result %q: %v", js, err)
		}
	}
	want := childResult{
		Found:      []string{filepath.Join(root, "ok"), filepath.Join(root, "z", "late")},
		Unreadable: []string{filepath.Join(root, "locked"), filepath.Join(root, "noexec", "sub")},
		RootErr:    `search folder "` + filepath.Join(root, "locked") + `" cannot be read: permission denied`,
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestUnreadableChild is TestUnreadable's scan, run without privileges.
func TestUnreadableChild(t *testing.T) {
	root := os.Getenv(childEnv)
	if root == "" {
		t.Skip("helper of TestUnreadable")
	}
	res := scanUnreadable(t, root)
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("RESULT " + string(js) + "\n")
}

func scanUnreadable(t *testing.T, root string) childResult {
	got, sum := scanAll(t, &Scanner{}, Request{Dirs: []string{root}})
	res := childResult{Found: paths(got), Unreadable: sum.Unreadable}
	_, err := Scan(context.Background(), Request{Dirs: []string{filepath.Join(root, "locked")}}, nil, nil)
	var re *RootError
	if errors.As(err, &re) {
		res.RootErr = err.Error()
	} else {
		res.RootErr = "not a RootError: " + errString(err)
	}
	return res
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
