package logfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
