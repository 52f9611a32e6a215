package detect

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// git runs the real git binary in dir with a clean configuration and
// returns its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitErr(dir, args...)
	if err != nil {
		t.Fatalf("git %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return out
}

func gitErr(dir string, args ...string) (string, error) {
	base := []string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main",
		"-c", "protocol.file.allow=always", "-c", "advice.detachedHead=false"}
	cmd := exec.Command("git", append(base, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// newRepo makes a repository at dir with one commit of the given files
// (path → content).
func newRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	mkdirs(t, dir)
	git(t, dir, "init", "-q")
	for name, content := range files {
		write(t, filepath.Join(dir, name), content)
	}
	if len(files) == 0 {
		write(t, filepath.Join(dir, "README"), "x")
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "first")
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func write(t *testing.T, file, content string) {
	t.Helper()
	mkdirs(t, filepath.Dir(file))
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scanAll scans req and returns the candidates by path; it fails the test
// on an error or on a path reported twice.
func scanAll(t *testing.T, s *Scanner, req Request) (map[string]Candidate, Summary) {
	t.Helper()
	var mu sync.Mutex
	got := map[string]Candidate{}
	sum, err := s.Scan(context.Background(), req, func(c Candidate) {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := got[c.Path]; dup {
			t.Errorf("%s reported twice", c.Path)
		}
		got[c.Path] = c
	}, nil)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if sum.Found != len(got) {
		t.Errorf("Summary.Found = %d, reported %d", sum.Found, len(got))
	}
	return got, sum
}

func paths(m map[string]Candidate) []string {
	var out []string
	for p := range m {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
