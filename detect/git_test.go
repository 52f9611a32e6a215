package detect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"
	"github.com/google/go-cmp/cmp"

	"rootkeeper/app/apptest"
)

// TestRepositories builds every kind of repository with the real git and
// checks what the scan says of each against what git itself says.
func TestRepositories(t *testing.T) {
	root := apptest.RealTempDir(t)
	p := func(rel string) string { return filepath.Join(root, rel) }

	// A plain repository with a token in its remote, and a second remote.
	newRepo(t, p("plain"), map[string]string{"go.mod": "module x\n"})
	git(t, p("plain"), "remote", "add", "origin", "https://user:s3cret@example.com/team/plain.git")
	git(t, p("plain"), "remote", "add", "aaa", "https://example.com/other.git")

	// A linked worktree of it, beside it.
	git(t, p("plain"), "worktree", "add", "-q", "-b", "feature", p("plain-wt"))

	// A library and a super-project that has it as a submodule.
	newRepo(t, p("lib"), map[string]string{"Cargo.toml": "[package]\n"})
	newRepo(t, p("super"), nil)
	git(t, p("super"), "submodule", "add", "-q", p("lib"), "libs/lib")
	git(t, p("super"), "commit", "-q", "-m", "sub")

	// A repository nested in another without being its submodule.
	newRepo(t, p("plain/nested"), nil)

	// A bare clone, an empty repository, a detached HEAD.
	git(t, root, "clone", "-q", "--bare", p("plain"), p("bare.git"))
	mkdirs(t, p("empty"))
	git(t, p("empty"), "init", "-q", "-b", "trunk")
	newRepo(t, p("detached"), nil)
	git(t, p("detached"), "commit", "-q", "--allow-empty", "-m", "second")
	git(t, p("detached"), "checkout", "-q", "--detach", "HEAD~1")

	// Repositories go-git v5 refuses to open: sparse checkout (which sets
	// extensions.worktreeConfig) and a partial clone.
	newRepo(t, p("sparse"), map[string]string{"a/x": "1", "b/y": "2"})
	git(t, p("sparse"), "remote", "add", "origin", "git@example.com:team/sparse.git")
	git(t, p("sparse"), "sparse-checkout", "init")
	git(t, p("sparse"), "sparse-checkout", "set", "a")
	newRepo(t, p("partial"), nil)
	git(t, p("partial"), "config", "core.repositoryformatversion", "1")
	git(t, p("partial"), "config", "extensions.partialClone", "origin")
	git(t, p("partial"), "remote", "add", "origin", "https://oauth2:tok@example.com/partial.git")
	for _, rel := range []string{"sparse", "partial"} {
		cfg, err := os.ReadFile(p(rel + "/.git/config"))
		if err != nil || !strings.Contains(string(cfg), "[extensions]") {
			t.Fatalf("%s/.git/config has no [extensions] section; the case is not tested:\n%s", rel, cfg)
		}
		if _, err := gogit.PlainOpen(p(rel)); err == nil {
			t.Logf("note: go-git now opens %s", rel)
		}
	}

	got, _ := scanAll(t, &Scanner{}, Request{Dirs: []string{root}})

	want := map[string]Candidate{
		p("plain"):        {Kind: KindRepo, Markers: []string{"go.mod"}, Remote: "https://example.com/team/plain.git"},
		p("plain-wt"):     {Kind: KindRepo, Markers: []string{"go.mod"}, Remote: "https://example.com/team/plain.git", Worktree: true},
		p("plain/nested"): {Kind: KindRepo, Repo: p("plain")},
		p("lib"):          {Kind: KindRepo, Markers: []string{"Cargo.toml"}},
		p("super"):        {Kind: KindRepo},
		p("super/libs/lib"): {Kind: KindRepo, Markers: []string{"Cargo.toml"}, Remote: p("lib"),
			Repo: p("super"), Submodule: true},
		p("bare.git"): {Kind: KindRepo, Remote: p("plain"), Bare: true},
		p("empty"):    {Kind: KindRepo, Branch: "trunk"},
		p("detached"): {Kind: KindRepo},
		p("sparse"):   {Kind: KindRepo, Remote: "git@example.com:team/sparse.git"},
		p("partial"):  {Kind: KindRepo, Remote: "https://example.com/partial.git"},
	}
	for path, c := range want {
		c.Path = path
		if c.Branch == "" {
			c.Branch = gitBranch(t, path)
		}
		want[path] = c
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
	// The oracle agrees with the fixed expectations where they are known.
	if got := gitBranch(t, p("plain-wt")); got != "feature" {
		t.Errorf("git says the worktree is on %q", got)
	}
	if b := want[p("detached")].Branch; len(b) != 7 {
		t.Errorf("detached HEAD should show a short commit, git says %q", b)
	}
}

// gitBranch is what git calls the current branch, or the short commit of a
// detached HEAD.
func gitBranch(t *testing.T, dir string) string {
	t.Helper()
	if b, err := gitErr(dir, "symbolic-ref", "-q", "--short", "HEAD"); err == nil {
		return b
	}
	return git(t, dir, "rev-parse", "--short", "HEAD")
}

func TestStripCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:token@github.com/o/r.git":    "https://github.com/o/r.git",
		"https://ghp_abc@github.com/o/r.git":       "https://github.com/o/r.git",
		"HTTP://u:p@host:8080/r":                   "HTTP://host:8080/r",
		"https://github.com/o/r.git":               "https://github.com/o/r.git",
		"https://host/path/with@sign":              "https://host/path/with@sign",
		"https://u:p%40ss@host/r?x=1":              "https://host/r?x=1",
		"ssh://git@github.com/o/r.git":             "ssh://git@github.com/o/r.git",
		"ssh://git:pw@github.com/o/r.git":          "ssh://git@github.com/o/r.git",
		"ssh://:pw@host/r":                         "ssh://host/r",
		"git@github.com:o/r.git":                   "git@github.com:o/r.git",
		"/srv/git/r.git":                           "/srv/git/r.git",
		"file:///srv/git/r.git":                    "file:///srv/git/r.git",
		"ftp://anonymous:me@example.com@ftp.org/r": "ftp://ftp.org/r",
	} {
		if got := StripCredentials(in); got != want {
			t.Errorf("StripCredentials(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadHead(t *testing.T) {
	for content, want := range map[string]string{
		"ref: refs/heads/main\n":                     "main",
		"ref: refs/heads/feature/x\n":                "feature/x",
		"ref:refs/heads/odd":                         "odd",
		"ref: refs/remotes/origin/main\n":            "refs/remotes/origin/main",
		"0123456789abcdef0123456789abcdef01234567\n": "0123456",
		strings.Repeat("ab", 32) + "\n":              "ababab",
		"ref: refs/heads/.invalid\n":                 "",
		"garbage\n":                                  "<none>",
		"":                                           "<none>",
		"ref: somewhere\n":                           "<none>",
		"0123456789abcdef0123456789abcdef0123456z\n": "<none>",
	} {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "HEAD"), content)
		got, ok := readHead(dir)
		if !ok {
			got = "<none>"
		}
		if want == "ababab" {
			want = strings.Repeat("ab", 32)[:7]
		}
		if got != want {
			t.Errorf("HEAD %q: got %q, want %q", content, got, want)
		}
	}
	if _, ok := readHead(t.TempDir()); ok {
		t.Error("a folder without HEAD read as a repository")
	}
}
