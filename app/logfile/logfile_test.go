package logfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// 300 MB written in pipe-sized chunks leave at most Keep+1 files of at most
// MaxSize each, and the newest bytes are in NAME.
func TestRotatesWhileWriting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "logs", "srv.log")
	l, err := Open(path, 1<<20, 3)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for range 300 << 4 { // 300 MB
		if n, err := l.Write(chunk); n != len(chunk) || err != nil {
			t.Fatalf("write: %d %v", n, err)
		}
	}
	l.Write([]byte("the last line\n"))
	l.Close()
	entries, _ := os.ReadDir(filepath.Dir(path))
	var total int64
	for _, e := range entries {
		fi, _ := e.Info()
		total += fi.Size()
		if fi.Size() > 1<<20 {
			t.Errorf("%s is %d bytes, over the cap", e.Name(), fi.Size())
		}
	}
	if len(entries) != 4 || total > 4<<20 {
		t.Fatalf("%d files, %d bytes; want srv.log and 3 generations within 4 MiB", len(entries), total)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(data), "the last line\n") {
		t.Error("the newest bytes are not in the current file")
	}
	// One write over the cap keeps its tail.
	l, _ = Open(path, 1024, 1)
	l.Write([]byte(strings.Repeat("a", 5000) + "tail"))
	l.Close()
	data, _ = os.ReadFile(path)
	if len(data) > 1024 || !strings.HasSuffix(string(data), "tail") {
		t.Errorf("an oversized write left %d bytes ending %q", len(data), data[max(0, len(data)-4):])
	}
}

// A log whose folder becomes unusable (here a file stands where it was)
// says so through OnProblem, drops what is written meanwhile without
// failing the writer, and comes back once the folder can be made again,
// at the next write after RetryEvery; a generation that cannot be renamed
// is a problem said once, and the log goes on in its current file.
func TestRotationFailureIsToldAndRetried(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	path := filepath.Join(logs, "srv.log")
	l, err := Open(path, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(0, 0)
	l.now = func() time.Time { return now }
	var told []error
	l.OnProblem = func(err error) { told = append(told, err) }
	line := []byte(strings.Repeat("x", 60) + "\n")

	l.Write(line)
	os.RemoveAll(logs)
	os.WriteFile(logs, []byte("not a folder"), 0o600)
	if n, err := l.Write(line); n != len(line) || err != nil { // rotates: the folder is gone
		t.Fatalf("write while the folder is gone: %d %v", n, err)
	}
	if len(told) != 1 || told[0] == nil || !strings.Contains(told[0].Error(), path) || l.Problem() == nil {
		t.Fatalf("problems told: %v", told)
	}
	l.Write([]byte("lost\n"))
	os.Remove(logs)
	l.Write([]byte("lost too: tried again only after RetryEvery\n"))
	if _, err := os.Stat(logs); err == nil {
		t.Error("the log was tried again before RetryEvery")
	}
	now = now.Add(RetryEvery)
	l.Write([]byte("back\n"))
	if len(told) != 2 || told[1] != nil || l.Problem() != nil {
		t.Errorf("after the folder came back, problems told: %v", told)
	}
	if b, _ := os.ReadFile(path); string(b) != "back\n" {
		t.Errorf("the log holds %q", b)
	}

	// A generation that cannot be renamed: srv.log.1 is a folder with
	// something in it.
	os.MkdirAll(filepath.Join(path+".1", "x"), 0o700)
	os.Remove(path + ".2")
	os.MkdirAll(filepath.Join(path+".2", "x"), 0o700)
	l.Write(line)
	l.Write(line) // full: rotates, and cannot
	if len(told) != 3 || told[2] == nil || !strings.Contains(told[2].Error(), "rotating") {
		t.Fatalf("problems told: %v", told)
	}
	if b, _ := os.ReadFile(path); !bytes.HasSuffix(b, line) {
		t.Errorf("the log stopped being written: %q", b)
	}
	l.Close()
}
