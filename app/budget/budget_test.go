package budget

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

const mb = 1 << 20

// write makes a file of n real (non-sparse) bytes under dir.
func write(t *testing.T, dir, rel string, n int) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// stateFolder is a state folder as Rootkeeper leaves it: its own files,
// two servers' logs with old generations, two confined servers' temp
// folders (one that ran away) and a host's backup.
func stateFolder(t *testing.T) string {
	dir := t.TempDir()
	write(t, dir, "state.json", 64<<10)
	write(t, dir, "audit.jsonl", 2*mb)
	write(t, dir, "audit.jsonl.1", 2*mb)
	write(t, dir, "hosts/backups/claude-code-claude.json-x", 256<<10)
	write(t, dir, "logs/fs.log", mb)
	write(t, dir, "logs/fs.log.1", mb)
	write(t, dir, "logs/fs.log.2", mb)
	write(t, dir, "logs/web.log", mb)
	write(t, dir, "logs/web.log.1", 2*mb)
	write(t, dir, "tmp/server-runaway/a/b/big", 30*mb)
	write(t, dir, "tmp/server-runaway/small", 1*mb)
	write(t, dir, "tmp/server-quiet/cache", 3*mb)
	return dir
}

// Within its budget, nothing is touched.
func TestWithinBudgetNothingChanges(t *testing.T) {
	dir := stateFolder(t)
	r, err := Check(dir, 100*mb)
	if err != nil {
		t.Fatal(err)
	}
	if r.Trimmed() || r.Before < 44*mb || r.Before != r.After {
		t.Fatalf("report %+v", r)
	}
	if !exists(filepath.Join(dir, "tmp/server-runaway/a/b/big")) {
		t.Fatal("a file was removed within the budget")
	}
}

// Over budget, the largest temp folder goes first, and only as much as
// needed: the quiet server's temp and every log stay.
func TestTheRunawayTempFolderIsEmptiedFirst(t *testing.T) {
	dir := stateFolder(t)
	r, err := Check(dir, 20*mb)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Emptied, []string{filepath.Join("tmp", "server-runaway")}) || len(r.Removed) != 0 {
		t.Fatalf("report %+v", r)
	}
	if r.After > 20*mb || r.Before < 44*mb {
		t.Fatalf("before %d after %d", r.Before, r.After)
	}
	// The folder stays (a running server's ruleset names it), empty.
	if entries, err := os.ReadDir(filepath.Join(dir, "tmp/server-runaway")); err != nil || len(entries) != 0 {
		t.Fatalf("runaway temp folder: %v %v", entries, err)
	}
	for _, keep := range []string{"tmp/server-quiet/cache", "logs/fs.log.2", "logs/web.log.1"} {
		if !exists(filepath.Join(dir, keep)) {
			t.Errorf("%s was removed", keep)
		}
	}
}

// When the temp folders are not enough, old log generations go, largest
// first; the state file, the audit log, the logs being written and the
// hosts' backups never do, even when the budget cannot be met.
func TestOldLogsGoNextAndDecisionsNever(t *testing.T) {
	dir := stateFolder(t)
	r, err := Check(dir, 10*mb)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Emptied) != 2 || !slices.Contains(r.Removed, filepath.Join("logs", "web.log.1")) {
		t.Fatalf("report %+v", r)
	}
	if r.After > 10*mb {
		t.Fatalf("after %d, want within 10 MiB", r.After)
	}
	r, err = Check(dir, 1) // cannot be met
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []string{"state.json", "audit.jsonl", "audit.jsonl.1", "hosts/backups/claude-code-claude.json-x", "logs/fs.log", "logs/web.log"} {
		if !exists(filepath.Join(dir, keep)) {
			t.Errorf("%s was removed", keep)
		}
	}
	if exists(filepath.Join(dir, "logs/fs.log.1")) {
		t.Error("an old log generation outlived an unmet budget")
	}
	if r.After < 5*mb {
		t.Errorf("after %d: what is kept was not counted", r.After)
	}
}

// A sparse file counts for the blocks it holds, not the terabyte it
// claims; a symlink out of a temp folder is neither counted nor followed
// when the folder is emptied.
func TestSparseFilesAndSymlinks(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		apptest.Missing(t, fmt.Sprintf("no sparse files here: %v", err))
	}
	f.Close()
	outside := t.TempDir()
	precious := write(t, outside, "precious", 8*mb)
	write(t, dir, "tmp/server-x/junk", 4*mb)
	if err := os.Symlink(outside, filepath.Join(dir, "tmp/server-x/link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "tmp/server-fake")); err != nil {
		t.Fatal(err)
	}
	r, err := Check(dir, 1*mb)
	if err != nil {
		t.Fatal(err)
	}
	if r.Before > 6*mb {
		t.Errorf("before %d: a sparse file or a symlink's target was counted", r.Before)
	}
	if !slices.Equal(r.Emptied, []string{filepath.Join("tmp", "server-x")}) {
		t.Errorf("emptied %v", r.Emptied)
	}
	if !exists(precious) {
		t.Fatal("emptying a temp folder followed a symlink out of it")
	}
}

// Run reports a trim once, then that the folder is back within budget.
func TestRunReportsTrimAndRecovery(t *testing.T) {
	dir := stateFolder(t)
	reports := make(chan Report, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- Run(ctx, dir, Options{Limit: 20 * mb, Every: 20 * time.Millisecond, OnTrim: func(r Report) { reports <- r }})
	}()
	first := <-reports
	if !first.Trimmed() || first.String() == "" {
		t.Fatalf("first report %+v", first)
	}
	if back := <-reports; back.Trimmed() {
		t.Fatalf("second report %+v, want the all-clear", back)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-reports:
		t.Fatalf("unexpected report %+v", r)
	default:
	}
}

// A confined server's temp folder lives outside the state folder, behind
// the link STATE/tmp/server-NAME (app.ServerTemp): it counts against the
// budget and is emptied first, through the link, while the folder stays.
func TestLinkedTempFolderCountsAndIsEmptied(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir := t.TempDir()
	write(t, dir, "state.json", 64<<10)
	temp, err := app.ServerTemp(dir, "runaway")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(filepath.Dir(temp)) == dir || !filepath.IsAbs(temp) {
		t.Fatalf("temp folder %s", temp)
	}
	write(t, temp, "deep/junk", 20*mb)
	r, err := Check(dir, 8*mb)
	if err != nil {
		t.Fatal(err)
	}
	if r.Before < 20*mb {
		t.Errorf("before %d: the linked temp folder was not counted", r.Before)
	}
	if !slices.Equal(r.Emptied, []string{filepath.Join("tmp", "server-runaway")}) || r.After > 8*mb {
		t.Errorf("report %+v", r)
	}
	if entries, err := os.ReadDir(temp); err != nil || len(entries) != 0 {
		t.Errorf("temp folder after the trim: %v %v", entries, err)
	}
	if !exists(filepath.Join(dir, "state.json")) {
		t.Error("state.json went")
	}
}

// A data folder kept aside when its server came to run another program
// (app.KeptData) counts in the budget, and is never trimmed: it is the
// person's to give to the new program or remove.
func TestKeptDataCountsAndStays(t *testing.T) {
	dir := stateFolder(t)
	before, err := Check(dir, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	kept := write(t, dir, "previous-data/mem/20260501T100000Z/memory.jsonl", 8*mb)
	r, err := Check(dir, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	if grew := r.Before - before.Before; grew < 8*mb {
		t.Errorf("the kept folder added %d bytes to the count, want at least %d", grew, 8*mb)
	}
	if _, err := Check(dir, mb); err != nil {
		t.Fatal(err)
	}
	if !exists(kept) {
		t.Error("a kept data folder was trimmed")
	}
}
