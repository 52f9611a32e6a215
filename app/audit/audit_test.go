package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAppendAndRead(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	t0 := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	want := []Entry{
		{Time: t0, Server: "fs", ProtocolVersion: "2025-11-25", Roots: []string{"file:///a", "file:///b%20c"}, Via: ViaRootsList},
		{Time: t0.Add(time.Second), Server: "other", ProtocolVersion: "2024-11-05", Roots: []string{}, Via: ViaRootsList},
		{Time: t0.Add(2 * time.Second), Server: "fs", ProtocolVersion: "2026-07-28", Error: "Roots not supported", Via: ViaInputRequest},
	}
	for _, e := range want {
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("got %d entries, want 3", len(got))
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) || got[i].Server != want[i].Server || got[i].Error != want[i].Error ||
			strings.Join(got[i].Roots, ",") != strings.Join(want[i].Roots, ",") || got[i].Via != want[i].Via {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	fs, err := Read(dir, "fs")
	if err != nil || len(fs) != 2 || fs[0].Server != "fs" || fs[1].Server != "fs" {
		t.Fatalf("Read(fs) = %+v, %v", fs, err)
	}
	fi, err := os.Stat(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestEmptyListIsNotNull(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	if err := l.Append(Entry{Server: "s", Via: ViaRootsList}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(l.Path())
	if !bytes.Contains(data, []byte(`"roots":[]`)) {
		t.Errorf("line %s lacks an empty roots list", data)
	}
}

func TestRotate(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	l.MaxSize = 400
	for i := range 20 {
		if err := l.Append(Entry{Server: "s", Roots: []string{"file:///x/" + strings.Repeat("a", i)}, Via: ViaRootsList}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	for _, name := range []string{FileName, RotatedName} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 400 {
			t.Errorf("%s is %d bytes, over the 400 limit", name, fi.Size())
		}
	}
	got, err := Read(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || len(got) >= 20 {
		t.Fatalf("read %d entries after rotation; want some but not all 20", len(got))
	}
	// In order, and ending with the last one written.
	for i := 1; i < len(got); i++ {
		if len(got[i].Roots[0]) != len(got[i-1].Roots[0])+1 {
			t.Fatalf("entries out of order at %d: %v then %v", i, got[i-1].Roots, got[i].Roots)
		}
	}
	if last := got[len(got)-1].Roots[0]; last != "file:///x/"+strings.Repeat("a", 19) {
		t.Errorf("last entry %q", last)
	}
}

func TestConcurrentAppend(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				if err := l.Append(Entry{Server: string(rune('a' + i)), Roots: []string{fmt.Sprintf("file:///r%d", j)}, Via: ViaRootsList}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	got, err := Read(dir, "")
	if err != nil || len(got) != 400 {
		t.Fatalf("read %d entries, %v; want 400", len(got), err)
	}
}

func TestReadSkipsTornLine(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"server":"a","roots":[],"via":"roots/list"}`+"\n"+`{"server":"b","ro`), 0o600)
	got, err := Read(dir, "")
	if err != nil || len(got) != 1 || got[0].Server != "a" {
		t.Fatalf("Read = %+v, %v", got, err)
	}
	none, err := Read(filepath.Join(dir, "missing"), "")
	if err != nil || len(none) != 0 {
		t.Fatalf("Read(missing) = %+v, %v", none, err)
	}
}

func TestRunCommand(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	t0 := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	l.Append(Entry{Time: t0, Server: "fs", ProtocolVersion: "2025-11-25", Roots: []string{"file:///a", "file:///b"}, Via: ViaRootsList})
	l.Append(Entry{Time: t0, Server: "my server", Roots: []string{}, Via: ViaRootsList})
	l.Append(Entry{Time: t0, Server: "fs", ProtocolVersion: "2026-07-28", Error: "Roots not supported", Via: ViaInputRequest})
	l.Close()
	ts := t0.Local().Format("2006-01-02T15:04:05.000Z07:00")

	var out bytes.Buffer
	if err := RunCommand(nil, dir, &out); err != nil {
		t.Fatal(err)
	}
	want := ts + " fs 2025-11-25 roots/list file:///a file:///b\n" +
		ts + ` "my server" - roots/list (none)` + "\n" +
		ts + " fs 2026-07-28 input-request error: Roots not supported\n"
	if out.String() != want {
		t.Errorf("text output:\n%s\nwant:\n%s", out.String(), want)
	}

	out.Reset()
	if err := RunCommand([]string{"--server", "fs", "--json"}, dir, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("--server fs --json printed %d lines: %s", len(lines), out.String())
	}
	for _, line := range lines {
		var e Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Server != "fs" {
			t.Errorf("line %s: %+v, %v", line, e, err)
		}
	}
}

func TestRunCommandBadUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		name string // what the message must mention
	}{
		{[]string{"--bogus"}, "bogus"},
		{[]string{"extra"}, `"extra"`},
		{[]string{"--server", ""}, `""`},
		{[]string{"--json=maybe"}, "maybe"},
		{[]string{"--server"}, "server"},
	} {
		err := RunCommand(tc.args, t.TempDir(), &bytes.Buffer{})
		var ue interface{ ExitCode() int }
		if !errors.As(err, &ue) || ue.ExitCode() != 2 {
			t.Errorf("%q: err %v, want exit code 2", tc.args, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.name) || strings.Contains(msg, "\n") {
			t.Errorf("%q: message %q should name %s on one line", tc.args, msg, tc.name)
		}
	}
}

// A server asking roots/list in a loop gets one line per distinct answer
// per minute, with a count: it cannot rotate away other servers' history.
func TestFloodIsCoalesced(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	l.MaxSize = 64 << 10
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l.Append(Entry{Time: start, Server: "honest", Roots: []string{"file:///a"}, Via: ViaRootsList})
	for i := range 100_000 {
		at := start.Add(time.Duration(i) * time.Millisecond) // 100 s of flooding
		if err := l.Append(Entry{Time: at, Server: "flood", Roots: []string{"file:///b"}, Via: ViaRootsList}); err != nil {
			t.Fatal(err)
		}
	}
	l.Append(Entry{Time: start.Add(200 * time.Second), Server: "flood", Roots: []string{}, Via: ViaRootsList})
	l.Close()
	all, err := Read(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	honest, _ := Read(dir, "honest")
	if len(honest) != 1 {
		t.Fatalf("the honest server's history: %v", honest)
	}
	total := 0
	for _, e := range all {
		if e.Server == "flood" {
			total += max(1, e.Repeated)
		}
	}
	if total != 100_001 || len(all) > 6 {
		t.Fatalf("%d lines account for %d flood answers, want 100001 in a handful of lines: %+v", len(all), total, all)
	}
}
