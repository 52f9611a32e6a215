package detect

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"rootkeeper/app/apptest"
	"rootkeeper/app/atomicfile"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// testWindow replaces the 2-second racy window in these tests; they wait
// that long after making a tree (settle) so that the first scan may trust
// it.
const testWindow = 50 * time.Millisecond

// settle waits until every folder under root last changed more than
// testWindow ago by the clock a scan reads: only then may the first scan
// trust what it reads of them (see Cache). It waits on the folders' own
// times, which the file system's clock gives, ticking coarsely.
func settle(t *testing.T, root string) {
	t.Helper()
	var newest int64
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if st, ok := statDir(nil, p, 0); ok {
				newest = max(newest, st.mtime, st.ctime)
			}
		}
		return nil
	})
	apptest.Eventually(t, "every folder changed longer than the window ago", func() (bool, string) {
		return time.Now().Add(-testWindow).UnixNano() > newest, ""
	})
}

// sameAsFresh scans req with s (which has a cache) and without a cache, and
// fails unless both find the same candidates and visit as many folders.
func sameAsFresh(t *testing.T, s *Scanner, req Request) map[string]Candidate {
	t.Helper()
	got, sum := scanAll(t, s, req)
	want, wantSum := scanAll(t, &Scanner{Home: s.Home}, req)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with the cache:\n%v\nwithout:\n%v", paths(got), paths(want))
		for p, c := range want {
			if !reflect.DeepEqual(got[p], c) {
				t.Errorf("%s: with the cache %+v, without %+v", p, got[p], c)
			}
		}
	}
	if sum.Visited != wantSum.Visited || !reflect.DeepEqual(sum.Unreadable, wantSum.Unreadable) {
		t.Errorf("summary with the cache %+v, without %+v", sum, wantSum)
	}
	return got
}

func TestCacheRescan(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cache is trusted on Linux only")
	}
	root := apptest.RealTempDir(t)
	deep := filepath.Join(root, "a", "b", "c", "d", "e")
	mkdirs(t, deep, filepath.Join(root, "a", "x", "y"), filepath.Join(root, "gone", "sub"), filepath.Join(root, "s"))
	write(t, filepath.Join(root, "p", "go.mod"), "module p\n")
	write(t, filepath.Join(root, "gone", "sub", "package.json"), "{}")
	write(t, filepath.Join(root, "a", "ws", "x.code-workspace"), `{"folders": [{"path": "../x"}]}`)
	newRepo(t, filepath.Join(root, "r"), nil)
	newRepo(t, filepath.Join(root, "a", "b", "r2"), map[string]string{"Cargo.toml": ""})
	git(t, filepath.Join(root, "r"), "worktree", "add", "-q", "-b", "wtb", filepath.Join(root, "a", "wt"))
	git(t, filepath.Join(root, "a", "b", "r2"), "submodule", "add", "-q", filepath.Join(root, "r"), "sub")
	git(t, root, "init", "-q", "--bare", filepath.Join(root, "a", "bare.git"))
	req := Request{Dirs: []string{root}}
	settle(t, root)

	c := NewCache()
	c.window = testWindow
	s := &Scanner{Cache: c}
	first := sameAsFresh(t, s, req)
	st := c.Stats()
	if st.Reused != 0 || st.Read == 0 || st.Folders < st.Read {
		t.Fatalf("first scan: %+v, want every folder read and held", st)
	}
	folders := st.Read

	// Unchanged: nothing is read again, the same is found (git metadata
	// read fresh, .code-workspace files too).
	again := sameAsFresh(t, s, req)
	if !reflect.DeepEqual(again, first) {
		t.Errorf("re-scan of an unchanged tree found %v, first %v", paths(again), paths(first))
	}
	if st := c.Stats(); st.Read != 0 || st.Reused != folders {
		t.Errorf("re-scan of an unchanged tree: %+v, want all %d folders reused", st, folders)
	}

	// Changes: a project made deep in the tree, a renamed folder, a deleted
	// one, a branch switch (only .git/HEAD changes), a marker added to a
	// folder, a folder replaced by a symbolic link to another (never
	// followed).
	write(t, filepath.Join(deep, "new", "pyproject.toml"), "")
	if err := os.Rename(filepath.Join(root, "p"), filepath.Join(root, "p2")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "gone")); err != nil {
		t.Fatal(err)
	}
	git(t, filepath.Join(root, "r"), "checkout", "-q", "-b", "feature")
	write(t, filepath.Join(root, "a", "x", "y", "Gemfile"), "")
	if err := os.Remove(filepath.Join(root, "s")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "s")); err != nil {
		t.Fatal(err)
	}
	git(t, filepath.Join(root, "a", "wt"), "checkout", "-q", "-b", "wt2") // a linked worktree's own HEAD
	got := sameAsFresh(t, s, req)
	for p, want := range map[string]Candidate{
		filepath.Join(root, "a", "wt"):             {Kind: KindRepo, Branch: "wt2", Worktree: true},
		filepath.Join(root, "a", "b", "r2", "sub"): {Kind: KindRepo, Submodule: true},
		filepath.Join(root, "a", "bare.git"):       {Kind: KindRepo, Bare: true},
	} {
		c := got[p]
		if c.Kind != want.Kind || want.Branch != "" && c.Branch != want.Branch || c.Worktree != want.Worktree || c.Submodule != want.Submodule || c.Bare != want.Bare {
			t.Errorf("%s: %+v, want %+v", p, c, want)
		}
	}
	for _, p := range []string{filepath.Join(deep, "new"), filepath.Join(root, "p2"), filepath.Join(root, "a", "x", "y")} {
		if _, ok := got[p]; !ok {
			t.Errorf("re-scan missed %s", p)
		}
	}
	for _, p := range []string{filepath.Join(root, "p"), filepath.Join(root, "gone", "sub"), filepath.Join(root, "s")} {
		if _, ok := got[p]; ok {
			t.Errorf("re-scan still reports %s", p)
		}
	}
	if b := got[filepath.Join(root, "r")].Branch; b != "feature" {
		t.Errorf("branch after a switch = %q, want feature", b)
	}
	st = c.Stats()
	if st.Reused == 0 || st.Read == 0 {
		t.Errorf("re-scan after changes: %+v, want the changed folders read and the others reused", st)
	}
	// The unchanged folders below a changed one are still reused: c and
	// ws, x, b, r2... All but root, a, a/x, a/x/y, d, d/e?, new, p2.
	if st.Read > 8 {
		t.Errorf("re-scan after changes read %d folders, want only the changed ones and the new ones", st.Read)
	}
}

// TestCacheRacy: folders changed within the racy window of the scan that
// read them are read again, even when their stat has not changed since.
func TestCacheRacy(t *testing.T) {
	root := apptest.RealTempDir(t)
	mkdirs(t, filepath.Join(root, "a", "b"))
	c := NewCache()
	// The rule with a window no slow machine outlasts: the tree was made
	// within it, so nothing of it may be trusted.
	c.window = time.Hour
	s := &Scanner{Cache: c}
	req := Request{Dirs: []string{root}}
	sameAsFresh(t, s, req)
	write(t, filepath.Join(root, "a", "b", "go.mod"), "")
	got := sameAsFresh(t, s, req)
	if _, ok := got[filepath.Join(root, "a", "b")]; !ok {
		t.Errorf("a project made just after the scan was missed")
	}
	if st := s.Cache.Stats(); st.Reused != 0 {
		t.Errorf("folders made within the window were trusted: %+v", st)
	}
	// The window of a cache made by NewCache is 2 seconds.
	now := time.Now()
	if got := NewCache().trustBefore(now); got != now.Add(-2*time.Second).UnixNano() {
		t.Errorf("default window: trusted before %v, want 2 s before %v", time.Unix(0, got), now)
	}
}

// TestCacheOptions: a listing is trusted only for the options it was read
// with: a skip list that changed, a deeper scan.
func TestCacheOptions(t *testing.T) {
	root := apptest.RealTempDir(t)
	write(t, filepath.Join(root, "keep", "go.mod"), "")
	write(t, filepath.Join(root, "skipme", "go.mod"), "")
	write(t, filepath.Join(root, "1", "2", "3", "go.mod"), "")
	settle(t, root)
	c := NewCache()
	c.window = testWindow
	s := &Scanner{Cache: c}

	got := sameAsFresh(t, s, Request{Dirs: []string{root}, Skip: []string{"skipme"}, Depth: 2})
	if _, ok := got[filepath.Join(root, "skipme")]; ok {
		t.Fatal("skip list ignored")
	}
	got = sameAsFresh(t, s, Request{Dirs: []string{root}})
	for _, p := range []string{filepath.Join(root, "skipme"), filepath.Join(root, "1", "2", "3")} {
		if _, ok := got[p]; !ok {
			t.Errorf("%s missed after the skip list and the depth changed", p)
		}
	}
	// A search folder that is no longer searched is forgotten.
	other := apptest.RealTempDir(t)
	sameAsFresh(t, s, Request{Dirs: []string{other}})
	if st := c.Stats(); st.Folders != 1 {
		t.Errorf("cache holds %d folders after scanning an empty folder, want 1", st.Folders)
	}
}

// TestCacheBusy: a scan that finds the cache in use scans without it.
func TestCacheBusy(t *testing.T) {
	root := apptest.RealTempDir(t)
	write(t, filepath.Join(root, "p", "go.mod"), "")
	c := NewCache()
	c.mu.Lock()
	got, _ := scanAll(t, &Scanner{Cache: c}, Request{Dirs: []string{root}})
	c.mu.Unlock()
	if _, ok := got[filepath.Join(root, "p")]; !ok || len(c.roots) != 0 {
		t.Errorf("scan beside a busy cache: found %v, cache %v", paths(got), c.roots)
	}
}

// TestCacheFile: a cache saved by one run is trusted by the next, and a
// damaged file is an empty cache.
func TestCacheFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cache is trusted on Linux only")
	}
	root := apptest.RealTempDir(t)
	newRepo(t, filepath.Join(root, "r"), map[string]string{"go.mod": ""})
	write(t, filepath.Join(root, "a", "b", "x.code-workspace"), `{"folders": [{"path": "c"}]}`)
	mkdirs(t, filepath.Join(root, "a", "b", "c"))
	req := Request{Dirs: []string{root}}
	settle(t, root)
	c := NewCache()
	c.window = testWindow
	first := sameAsFresh(t, &Scanner{Cache: c}, req)
	file := filepath.Join(t.TempDir(), "scan.cache")
	if err := c.Save(file, writeFile); err != nil {
		t.Fatal(err)
	}
	saved := c.Stats()

	loaded := LoadCache(file)
	loaded.window = testWindow
	if st := loaded.Stats(); st.Folders != saved.Folders {
		t.Fatalf("loaded %d folders, saved %d", st.Folders, saved.Folders)
	}
	got := sameAsFresh(t, &Scanner{Cache: loaded}, req)
	if !reflect.DeepEqual(got, first) {
		t.Errorf("with the loaded cache %v, first %v", paths(got), paths(first))
	}
	if st := loaded.Stats(); st.Read != 0 || st.Reused != saved.Read {
		t.Errorf("scan with the loaded cache: %+v, want the %d folders reused", st, saved.Read)
	}

	// Saving what the file holds writes nothing; saving a change does.
	before, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := loaded.Save(file, writeFile); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(file); err != nil || !os.SameFile(before, after) {
		t.Errorf("an unchanged cache was written again (%v)", err)
	}
	mkdirs(t, filepath.Join(root, "a", "new"))
	sameAsFresh(t, &Scanner{Cache: loaded}, req)
	if err := loaded.Save(file, writeFile); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(file); err != nil || os.SameFile(before, after) {
		t.Errorf("a changed cache was not saved (%v)", err)
	}
	if st := LoadCache(file).Stats(); st.Folders != saved.Folders+1 {
		t.Errorf("saved %d folders, want %d", st.Folders, saved.Folders+1)
	}

	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{data[:len(data)/2], append(data, 0), []byte("rootkeeper scan cache 1\n\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")} {
		if err := os.WriteFile(file, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if st := LoadCache(file).Stats(); st.Folders != 0 {
			t.Errorf("a damaged file (%d bytes) gave a cache of %d folders", len(bad), st.Folders)
		}
	}
	if st := LoadCache(filepath.Join(t.TempDir(), "none")).Stats(); st.Folders != 0 {
		t.Errorf("a missing file gave %d folders", st.Folders)
	}
}

// TestCacheNoLeakedFiles: re-scans, cancelled or not, close every folder
// they open (cached folders are opened O_PATH, or stat'ed relative to a
// folder above), and a cancelled one leaves a cache that still tells the
// truth.
func TestCacheNoLeakedFiles(t *testing.T) {
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
	settle(t, root)
	c := NewCache()
	c.window = testWindow
	s := &Scanner{Cache: c}
	req := Request{Dirs: []string{root}}
	before := fds()
	sameAsFresh(t, s, req)
	for i := 0; i < 20; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		var k atomic.Int32
		s.Scan(ctx, req, func(Candidate) {
			if k.Add(1) == int32(i*7+1) {
				cancel()
			}
		}, nil)
		cancel()
		if i == 10 {
			// A change halfway: one folder deep down gains a project.
			write(t, filepath.Join(root, "d1", "d5", "d21", "new", "go.mod"), "")
			t.Cleanup(func() { os.RemoveAll(filepath.Join(root, "d1", "d5", "d21", "new")) })
		}
	}
	got := sameAsFresh(t, s, req)
	if _, ok := got[filepath.Join(root, "d1", "d5", "d21", "new")]; !ok {
		t.Error("project made between cancelled re-scans missed")
	}
	if st := c.Stats(); st.Reused == 0 {
		t.Errorf("nothing reused: %+v", st)
	}
	if after := fds(); after > before {
		t.Errorf("%d files open before, %d after", before, after)
	}
}

// TestCacheGitLink: a .git that is a symbolic link is looked at again on a
// re-scan, since what it points to can change without its folder changing.
func TestCacheGitLink(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cache is trusted on Linux only")
	}
	root := apptest.RealTempDir(t)
	elsewhere := apptest.RealTempDir(t)
	newRepo(t, filepath.Join(elsewhere, "real"), nil)
	mkdirs(t, filepath.Join(root, "w"))
	target := filepath.Join(elsewhere, "target")
	mkdirs(t, target) // a folder that is no git directory: w is no repository
	if err := os.Symlink(target, filepath.Join(root, "w", ".git")); err != nil {
		t.Fatal(err)
	}
	settle(t, root)
	c := NewCache()
	c.window = testWindow
	s := &Scanner{Cache: c}
	req := Request{Dirs: []string{root}}
	if got := sameAsFresh(t, s, req); len(got) != 0 {
		t.Fatalf("found %v before the change", paths(got))
	}
	// The link now points to a "gitdir:" file naming a real repository.
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	write(t, target, "gitdir: "+filepath.Join(elsewhere, "real", ".git")+"\n")
	got := sameAsFresh(t, s, req)
	if cand, ok := got[filepath.Join(root, "w")]; !ok || cand.Kind != KindRepo {
		t.Errorf("after the link's target became a gitdir file: %v", got)
	}
	if st := c.Stats(); st.Read != 0 {
		t.Errorf("the folders themselves did not change, yet %d were read", st.Read)
	}
}

// writeFile is how Rootkeeper's callers write the cache: atomically.
func writeFile(file string, data []byte) error {
	return atomicfile.Write(file, data, atomicfile.Options{})
}
