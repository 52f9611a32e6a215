package detect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"rootkeeper/app/serverentry"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"rootkeeper/app/apptest"
)

// TestMarkers puts each marker alone in a folder and expects that folder as
// a project with that marker.
func TestMarkers(t *testing.T) {
	files := []string{
		"go.mod", "go.work", "package.json", "deno.json", "deno.jsonc", "Cargo.toml",
		"pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "pom.xml", "build.gradle",
		"build.gradle.kts", "settings.gradle", "build.sbt", "CMakeLists.txt", "meson.build",
		"Gemfile", "composer.json", "mix.exs", "rebar.config", "pubspec.yaml", "Package.swift",
		"stack.yaml", "dune-project", "project.clj", "deps.edn", "Project.toml", "build.zig",
		"gleam.toml", "MODULE.bazel", "flake.nix",
		"App.sln", "App.csproj", "Lib.fsproj", "pkg.cabal", "tool.nimble", "team.code-workspace",
	}
	folders := []string{"App.xcodeproj", "App.xcworkspace"}
	root := apptest.RealTempDir(t)
	want := map[string]Candidate{}
	for i, m := range append(files, folders...) {
		dir := filepath.Join(root, fmt.Sprintf("p%02d", i))
		if i < len(files) {
			write(t, filepath.Join(dir, m), "{}")
		} else {
			mkdirs(t, filepath.Join(dir, m, "project.xcworkspace"))
		}
		want[dir] = Candidate{Path: dir, Kind: KindProject, Markers: []string{m}}
	}
	// Not markers: near misses and a marker name used for a folder.
	write(t, filepath.Join(root, "none", "go.mod.bak"), "")
	write(t, filepath.Join(root, "none", ".sln"), "")
	write(t, filepath.Join(root, "none", "notes.txt"), "")
	mkdirs(t, filepath.Join(root, "none", "package.json"))
	// Several markers in one folder, sorted.
	multi := filepath.Join(root, "multi")
	for _, m := range []string{"package.json", "go.mod", "Cargo.toml"} {
		write(t, filepath.Join(multi, m), "")
	}
	want[multi] = Candidate{Path: multi, Kind: KindProject, Markers: []string{"Cargo.toml", "go.mod", "package.json"}}

	got, _ := scanAll(t, &Scanner{}, Request{Dirs: []string{root}})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
}

// TestMonorepo checks that packages below a repository name it as their
// repository, and that nothing inside .git is reported.
func TestMonorepo(t *testing.T) {
	root := apptest.RealTempDir(t)
	mono := filepath.Join(root, "mono")
	newRepo(t, mono, map[string]string{
		"package.json":            "{}",
		"packages/a/package.json": "{}",
		"packages/b/go.mod":       "module b",
		"tools/x/Cargo.toml":      "",
	})
	write(t, filepath.Join(mono, ".git", "hidden", "go.mod"), "") // never entered
	got, _ := scanAll(t, &Scanner{}, Request{Dirs: []string{mono}})
	want := map[string]Candidate{
		mono:                              {Path: mono, Kind: KindRepo, Branch: "main", Markers: []string{"package.json"}},
		filepath.Join(mono, "packages/a"): {Path: filepath.Join(mono, "packages/a"), Kind: KindProject, Markers: []string{"package.json"}, Repo: mono},
		filepath.Join(mono, "packages/b"): {Path: filepath.Join(mono, "packages/b"), Kind: KindProject, Markers: []string{"go.mod"}, Repo: mono},
		filepath.Join(mono, "tools/x"):    {Path: filepath.Join(mono, "tools/x"), Kind: KindProject, Markers: []string{"Cargo.toml"}, Repo: mono},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
	// Scanning a package alone still names the repository above it.
	sub := filepath.Join(mono, "packages/b")
	got, _ = scanAll(t, &Scanner{}, Request{Dirs: []string{sub}})
	if diff := cmp.Diff(map[string]Candidate{sub: want[sub]}, got); diff != "" {
		t.Errorf("scanning inside a repository (-want +got):\n%s", diff)
	}
}

func TestWorkspaceFolders(t *testing.T) {
	root := apptest.RealTempDir(t)
	outside := apptest.RealTempDir(t)
	ws := filepath.Join(root, "ws")
	write(t, filepath.Join(ws, "team.code-workspace"), `{
		// folders of the workspace
		"folders": [
			{ "path": "../plain-folder" },            /* no marker of its own */
			{ "path": "`+outside+`/api", "name": "api" },
			{ "uri": "file://`+outside+`/web" },
			{ "uri": "vscode-remote://ssh-remote+box/home/x" },
			{ "path": "../missing" },
			{ "path": "/proc/self" },                 // never read
		],
		"settings": { "url": "http://not-a-comment", },
	}`)
	mkdirs(t, filepath.Join(root, "plain-folder"))
	newRepo(t, filepath.Join(outside, "api"), map[string]string{"go.mod": ""})
	write(t, filepath.Join(outside, "web", "package.json"), "{}")

	got, _ := scanAll(t, &Scanner{JSONC: serverentry.Standardize}, Request{Dirs: []string{root}})
	want := map[string]Candidate{
		ws:                                  {Kind: KindProject, Markers: []string{"team.code-workspace"}},
		filepath.Join(root, "plain-folder"): {Kind: KindProject, Markers: []string{"team.code-workspace"}},
		filepath.Join(outside, "api"):       {Kind: KindRepo, Branch: "main", Markers: []string{"go.mod"}},
		filepath.Join(outside, "web"):       {Kind: KindProject, Markers: []string{"package.json"}},
	}
	for p, c := range want {
		c.Path = p
		want[p] = c
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
}

func TestSkip(t *testing.T) {
	root := apptest.RealTempDir(t)
	for _, d := range DefaultSkip() {
		write(t, filepath.Join(root, "app", filepath.FromSlash(d), "dep", "package.json"), "{}")
	}
	write(t, filepath.Join(root, "app", "package.json"), "{}")
	write(t, filepath.Join(root, "app", "generated", "x", "go.mod"), "")
	write(t, filepath.Join(root, "app", "keep", "go.mod"), "")
	write(t, filepath.Join(root, "other", "go.mod"), "")

	// Defaults: only the app, its kept package, generated and other.
	got, _ := scanAll(t, &Scanner{}, Request{Dirs: []string{root}})
	want := []string{
		filepath.Join(root, "app"), filepath.Join(root, "app", "generated", "x"),
		filepath.Join(root, "app", "keep"), filepath.Join(root, "other"),
	}
	if diff := cmp.Diff(want, paths(got)); diff != "" {
		t.Errorf("default skip list (-want +got):\n%s", diff)
	}
	// Extra names and an absolute path.
	got, _ = scanAll(t, &Scanner{}, Request{Dirs: []string{root}, Skip: []string{"generated", filepath.Join(root, "other")}})
	want = []string{filepath.Join(root, "app"), filepath.Join(root, "app", "keep")}
	if diff := cmp.Diff(want, paths(got)); diff != "" {
		t.Errorf("extra skip list (-want +got):\n%s", diff)
	}
	// A skipped name is still scanned when it is the search folder itself.
	nm := filepath.Join(root, "app", "node_modules")
	got, _ = scanAll(t, &Scanner{}, Request{Dirs: []string{nm}})
	if diff := cmp.Diff([]string{filepath.Join(nm, "dep")}, paths(got)); diff != "" {
		t.Errorf("skipped folder as search folder (-want +got):\n%s", diff)
	}
}

func TestDepth(t *testing.T) {
	root := apptest.RealTempDir(t)
	for _, rel := range []string{"a", "a/b", "a/b/c", "a/b/c/d", "a/b/c/d/e"} {
		write(t, filepath.Join(root, rel, "go.mod"), "")
	}
	rels := func(m map[string]Candidate) []string {
		var out []string
		for _, p := range paths(m) {
			r, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(r))
		}
		return out
	}
	got, _ := scanAll(t, &Scanner{}, Request{Dirs: []string{root}, Depth: 2})
	if diff := cmp.Diff([]string{"a", "a/b"}, rels(got)); diff != "" {
		t.Errorf("depth 2 (-want +got):\n%s", diff)
	}
	// The home folder is shallow by default, deep when asked.
	got, _ = scanAll(t, &Scanner{Home: root}, Request{Dirs: []string{root}})
	if diff := cmp.Diff([]string{"a", "a/b", "a/b/c"}, rels(got)); diff != "" {
		t.Errorf("home, default depth (-want +got):\n%s", diff)
	}
	got, _ = scanAll(t, &Scanner{Home: root}, Request{Dirs: []string{root}, Depth: 5})
	if len(got) != 5 {
		t.Errorf("home with depth 5 found %v", rels(got))
	}
	// No folders: the default search folders of home, each once, with
	// home itself shallow.
	write(t, filepath.Join(root, "src", "1", "2", "3", "4", "deep", "go.mod"), "")
	got, _ = scanAll(t, &Scanner{Home: root}, Request{})
	if diff := cmp.Diff([]string{"a", "a/b", "a/b/c", "src/1/2/3/4/deep"}, rels(got)); diff != "" {
		t.Errorf("default search folders (-want +got):\n%s", diff)
	}
}

func TestDefaultSearchFolders(t *testing.T) {
	home := apptest.RealTempDir(t)
	for _, d := range []string{"Documents", "src", "go/src", "code", "unrelated"} {
		mkdirs(t, filepath.Join(home, d))
	}
	write(t, filepath.Join(home, "projects"), "a file, not a folder")
	want := []string{
		filepath.Join(home, "src"), filepath.Join(home, "code"), filepath.Join(home, "go", "src"),
		filepath.Join(home, "Documents"), home,
	}
	if diff := cmp.Diff(want, DefaultSearchFolders(home)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := DefaultSearchFolders(""); got != nil {
		t.Errorf("no home: %v", got)
	}
}

// TestSymlinks checks that links to folders are never followed: a loop
// cannot trap the walk, and a project reached only through a link is not
// reported (it would be reported under a path that is not its own).
func TestSymlinks(t *testing.T) {
	root := apptest.RealTempDir(t)
	outside := apptest.RealTempDir(t)
	write(t, filepath.Join(root, "a", "go.mod"), "")
	write(t, filepath.Join(outside, "elsewhere", "go.mod"), "")
	for link, target := range map[string]string{
		"a/loop":    "..",
		"a/self":    ".",
		"a/b/up":    "../..",
		"x1":        "x2",
		"x2":        "x1",
		"elsewhere": filepath.Join(outside, "elsewhere"),
	} {
		mkdirs(t, filepath.Dir(filepath.Join(root, link)))
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	var got map[string]Candidate
	var sum Summary
	go func() {
		defer close(done)
		got, sum = scanAll(t, &Scanner{}, Request{Dirs: []string{root}})
	}()
	select {
	case <-done:
	case <-time.After(apptest.Patience):
		t.Fatal("scan of a tree with symlink loops did not finish (hung?)")
	}
	if diff := cmp.Diff([]string{filepath.Join(root, "a")}, paths(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if sum.Visited != 3 { // root, a, a/b
		t.Errorf("visited %d folders, want 3", sum.Visited)
	}
	// A search folder that is a link is resolved and scanned under its real path.
	link := filepath.Join(root, "elsewhere")
	got, _ = scanAll(t, &Scanner{}, Request{Dirs: []string{link}})
	if diff := cmp.Diff([]string{filepath.Join(outside, "elsewhere")}, paths(got)); diff != "" {
		t.Errorf("linked search folder (-want +got):\n%s", diff)
	}
}

func TestRootErrors(t *testing.T) {
	root := apptest.RealTempDir(t)
	file := filepath.Join(root, "file")
	write(t, file, "")
	missing := filepath.Join(root, "missing")
	for _, tc := range []struct {
		dir, want string
		is        error
	}{
		{missing, fmt.Sprintf("search folder %q does not exist", missing), fs.ErrNotExist},
		{file, fmt.Sprintf("search folder %q is not a folder", file), errNotDir},
		{"/proc/self", `search folder "/proc/self" is a system folder (/proc, /sys, /dev are never scanned)`, errSystemDir},
	} {
		called := false
		_, err := new(Scanner).Scan(context.Background(), Request{Dirs: []string{root, tc.dir}}, func(Candidate) { called = true }, nil)
		var re *RootError
		if !errors.As(err, &re) || !errors.Is(err, tc.is) || err.Error() != tc.want {
			t.Errorf("Scan(%s) = %v, want %q", tc.dir, err, tc.want)
		}
		if called {
			t.Errorf("Scan(%s) reported candidates before failing", tc.dir)
		}
	}
}

// TestProgress: progress comes at most once a ProgressInterval while the
// scan runs, then once at the end with the summary's counts, never going
// back. It runs in a synctest bubble, whose clock moves only while every
// goroutine of the scan waits (here: the slow consumer's sleeps), so the
// bound holds exactly, however loaded the machine.
func TestProgress(t *testing.T) {
	root := sharedTree(t)
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var events []Progress
		s := Scanner{Workers: 1}
		start := time.Now()
		sum, err := s.Scan(context.Background(), Request{Dirs: []string{root}}, func(Candidate) {
			time.Sleep(time.Millisecond) // long enough for several events
		}, func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, p)
		})
		took := time.Since(start) // the bubble's time: the consumer's sleeps
		if err != nil {
			t.Fatal(err)
		}
		if len(events) < 2 {
			t.Fatalf("%d progress events in %v", len(events), took)
		}
		last := events[len(events)-1]
		if last.Visited != sum.Visited || last.Found != sum.Found || sum.Visited != treeSize+1 || sum.Found != treeSize/10 {
			t.Errorf("final progress %+v, summary %+v; want %d visited, %d found", last, sum, treeSize+1, treeSize/10)
		}
		if max := int(took/ProgressInterval) + 1; len(events) > max {
			t.Errorf("%d progress events in %v, want at most %d", len(events), took, max)
		}
		for i, e := range events {
			if i > 0 && e.Visited < events[i-1].Visited {
				t.Errorf("progress went back: %+v after %+v", e, events[i-1])
			}
			if !strings.HasPrefix(e.Current, root) {
				t.Errorf("progress names %q as the current folder", e.Current)
			}
		}
	})
}

// treeSize is the number of folders in sharedTree.
const treeSize = 1000

var shared struct {
	once sync.Once
	dir  string
	err  error
}

// sharedTree returns a tree of treeSize folders made once for the tests
// that only read it (making folders is slow on some machines).
func sharedTree(t *testing.T) string {
	t.Helper()
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "detect-tree-")
		if shared.err == nil {
			shared.dir, _ = filepath.EvalSymlinks(shared.dir)
			shared.err = makeTree(shared.dir, treeSize)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// makeTree makes n folders below root, four in each, every tenth holding a
// go.mod.
func makeTree(root string, n int) error {
	dirs := []string{root}
	for i := 1; i <= n; i++ {
		d := filepath.Join(dirs[(i-1)/4], fmt.Sprintf("d%d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
		dirs = append(dirs, d)
		if i%10 == 0 {
			if err := os.WriteFile(filepath.Join(d, "go.mod"), nil, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestCancel cancels a scan whose consumer is slow and expects it to stop
// early (most of the tree unread), with no callback after it returns: in a
// synctest bubble, once Scan has returned, synctest.Wait lets every
// goroutine the scan left run until it blocks or ends, so a late callback
// would be seen, not missed.
func TestCancel(t *testing.T) {
	root := sharedTree(t)
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var returned, late atomic.Bool
		var founds atomic.Int32
		s := Scanner{Workers: 8}
		sum, err := s.Scan(ctx, Request{Dirs: []string{root}}, func(Candidate) {
			if returned.Load() {
				late.Store(true)
			}
			if founds.Add(1) == 5 {
				cancel()
			}
			time.Sleep(5 * time.Millisecond) // a slow consumer
		}, func(Progress) {
			time.Sleep(time.Millisecond)
			if returned.Load() {
				late.Store(true)
			}
		})
		returned.Store(true)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Scan after cancel = %v, want context.Canceled", err)
		}
		if sum.Visited > treeSize/2 || sum.Found > 20 {
			t.Errorf("visited %d of %d folders, found %d: cancel did not stop the walk", sum.Visited, treeSize, sum.Found)
		}
		synctest.Wait()
		if late.Load() {
			t.Error("a callback ran after Scan returned")
		}
		// Cancelled before it starts.
		if _, err := s.Scan(ctx, Request{Dirs: []string{root}}, nil, nil); !errors.Is(err, context.Canceled) {
			t.Errorf("Scan with a cancelled context = %v", err)
		}
	})
}

// TestNoLeakedFiles checks that a cancelled scan closes every folder it
// kept open for its sub-folders.
func TestNoLeakedFiles(t *testing.T) {
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil && runtime.GOOS != "linux" {
			t.Skip("open files are counted in Linux's /proc/self/fd")
		}
		if err != nil {
			apptest.Missing(t, "no /proc/self/fd: "+err.Error())
		}
		return len(ents)
	}
	root := sharedTree(t)
	before := fds()
	for i := 0; i < 20; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		var k atomic.Int32
		new(Scanner).Scan(ctx, Request{Dirs: []string{root}}, func(Candidate) {
			if k.Add(1) == int32(i+1) {
				cancel()
			}
		}, nil)
		cancel()
	}
	scanAll(t, &Scanner{}, Request{Dirs: []string{root}})
	if after := fds(); after > before {
		t.Errorf("%d files open before, %d after", before, after)
	}
}
