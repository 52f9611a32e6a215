package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rootkeeper/app/apptest"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// attempt is a confined server's attempt on a path in folder (none: not a
// folder that is asked about) and what became of it.
func attempt(at time.Time, server, folder, path, decided string) Entry {
	e := Entry{Time: at, Server: server, Via: ViaReach, Roots: []string{}, Tried: path, Op: "read", Decided: decided}
	if folder != "" {
		e.Roots = []string{"file://" + folder}
	}
	return e
}

// accounted sums, for server, what the log stands for: each line once (or
// Repeated times), each summary its counts; and the summaries alone.
func accounted(entries []Entry, server string) (total, summaries int) {
	for _, e := range entries {
		if e.Server != server {
			continue
		}
		if e.Via == ViaSummary {
			summaries++
			for _, n := range e.Unwritten {
				total += n
			}
			continue
		}
		total += max(1, e.Repeated)
	}
	return total, summaries
}

// What is the trail and what is noise, line by line, in the order given:
// a later line's answer depends on the lines before it.
func TestWhatIsTrail(t *testing.T) {
	l := NewLog(t.TempDir())
	at := t0
	next := func() time.Time { at = at.Add(time.Second); return at }
	answer := func(roots ...string) Entry {
		return Entry{Time: next(), Server: "fs", Via: ViaRootsList, Roots: append([]string{}, roots...)}
	}
	raised := attempt(next(), "fs", "/s", "/s/a", ReachTimedOut)
	raised.Request = true
	limitedRequest := attempt(next(), "fs", "/t", "/t/a", ReachLimited)
	limitedRequest.Request = true
	for _, tc := range []struct {
		what  string
		e     Entry
		trail bool
	}{
		{"the first answer", answer("file:///a"), true},
		{"the same answer again", answer("file:///a"), false},
		{"a changed answer", answer("file:///a", "file:///b"), true},
		{"the same answer by another way", Entry{Time: next(), Server: "fs", Via: ViaInputRequest, Roots: []string{"file:///a", "file:///b"}}, true},
		{"the same answer to another server", Entry{Time: next(), Server: "other", Via: ViaRootsList, Roots: []string{"file:///a", "file:///b"}}, true},
		{"not asked", attempt(next(), "fs", "", "/etc/x", ReachIgnored), false},
		{"rate-limited", attempt(next(), "fs", "/q", "/q/x", ReachLimited), false},
		{"a request raised for nobody", attempt(next(), "fs", "/r", "/r/a", ReachUnasked), true},
		{"the first refusal on a folder", attempt(next(), "fs", "/r", "/r/b", ReachRefused), true},
		{"refused again there", attempt(next(), "fs", "/r", "/r/c", ReachRefused), false},
		{"refused again on the same file", attempt(next(), "fs", "/r", "/r/b", ReachRefused), false},
		{"the first refusal of another server there", attempt(next(), "other", "/r", "/r/b", ReachRefused), true},
		{"the first refusal on another folder", attempt(next(), "fs", "/q", "/q/x", ReachRefused), true},
		{"an asked request that timed out", raised, true},
		{"a call that joined it and timed out", attempt(next(), "fs", "/s", "/s/b", ReachTimedOut), false},
		{"a new request on that folder that timed out", func() Entry { e := raised; e.Time, e.Tried = next(), "/s/c"; return e }(), true},
		{"a request whatever became of it", limitedRequest, true},
		{"allowed once", attempt(next(), "fs", "/s", "/s/a", ReachOnce), true},
		{"allowed once again", attempt(next(), "fs", "/s", "/s/b", ReachOnce), true},
		{"the first attempt allowed", attempt(next(), "fs", "/s", "/s/a", ReachAllowed), true},
		{"allowed again before the restart", attempt(next(), "fs", "/s", "/s/b", ReachAllowed), false},
		{"an outcome this package does not know", attempt(next(), "fs", "/s", "/s/a", "escalated"), true},
		{"a confinement decision", Entry{Time: next(), Server: "fs", Via: ViaConfinement, Decided: ConfinedOff, Op: "window"}, true},
		{"the same decision again", Entry{Time: next(), Server: "fs", Via: ViaConfinement, Decided: ConfinedOff, Op: "window"}, true},
	} {
		before := sizeOf(t, l.Path())
		if err := l.Append(tc.e); err != nil {
			t.Fatal(err)
		}
		if grew := sizeOf(t, l.Path()) > before; grew != tc.trail {
			t.Errorf("%s: written to the trail %v, want %v", tc.what, grew, tc.trail)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Nothing is lost: the noise is in its own file.
	all, _ := Read(filepath.Dir(l.Path()), "")
	if n, _ := accounted(all, "fs"); n != 22 {
		t.Errorf("the log stands for %d lines of fs, want 22", n)
	}
}

func sizeOf(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// A server making 10,000 distinct attempts in a minute gets its budget of
// lines written and one summary that counts the rest by what became of
// them, with the first one not written as its sample; another server's
// budget is its own.
func TestNoiseBudget(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	l.NoiseBudget = 50
	for i := range 10_000 {
		at := t0.Add(time.Duration(i) * 5 * time.Millisecond) // 50 s
		decided := ReachIgnored
		if i%10 == 9 {
			decided = ReachLimited
		}
		if err := l.Append(attempt(at, "nosy", "", fmt.Sprintf("/missing/%d", i), decided)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		l.Append(attempt(t0.Add(time.Duration(i)*time.Second), "calm", "", fmt.Sprintf("/etc/%d", i), ReachIgnored))
	}
	if got := sizeOf(t, l.Path()); got != 0 {
		t.Errorf("noise wrote %d bytes to the trail", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	all, err := Read(dir, "nosy")
	if err != nil {
		t.Fatal(err)
	}
	// The bucket refills while the flood goes on: 50 s at 50 a minute
	// is 41 more.
	if len(all) < 51 || len(all) > 50+42+1 {
		t.Fatalf("%d lines for 10,000 attempts in 50 s with a budget of 50 a minute", len(all))
	}
	total, summaries := accounted(all, "nosy")
	if total != 10_000 || summaries != 1 {
		t.Fatalf("the lines stand for %d attempts in %d summaries, want 10000 in 1", total, summaries)
	}
	s := all[len(all)-1]
	if s.Via != ViaSummary || s.Tried != "/missing/50" || !s.Since.Equal(t0.Add(250*time.Millisecond)) ||
		!s.Time.Equal(t0.Add(9999*5*time.Millisecond)) || s.Unwritten[ReachLimited] < 990 || s.Unwritten[ReachIgnored] < 8900 {
		t.Errorf("summary %+v", s)
	}
	calm, _ := Read(dir, "calm")
	if len(calm) != 3 {
		t.Errorf("the calm server's attempts: %+v", calm)
	}
	text := FormatText(s)
	for _, want := range []string{" nosy - summary ", " not written since ", " not asked, ", " rate-limited; e.g. read /missing/50"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary text %q lacks %q", text, want)
		}
	}
}

// A flood lasting five minutes is summarised once a minute (by the times
// of its attempts), each summary counting its own minute; repeats of one
// line beyond the budget are counted as what they repeat.
func TestSummaryEveryMinute(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	l.NoiseBudget = 10
	for i := range 30_000 {
		at := t0.Add(time.Duration(i) * 10 * time.Millisecond) // 300 s
		path := fmt.Sprintf("/missing/%d", i)
		if i%2 == 0 {
			path = "/missing/same" // a repeat of the line before the one before
		}
		if err := l.Append(attempt(at, "nosy", "", path, ReachIgnored)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	all, _ := Read(dir, "nosy")
	total, summaries := accounted(all, "nosy")
	if total != 30_000 || summaries < 5 || summaries > 6 {
		t.Fatalf("%d lines stand for %d attempts in %d summaries, want 30000 in 5 or 6", len(all), total, summaries)
	}
	var prev Entry
	for _, e := range all {
		if e.Via != ViaSummary {
			continue
		}
		if span := e.Time.Sub(e.Since); span > time.Minute+time.Second {
			t.Errorf("a summary spans %v", span)
		}
		if !prev.Time.IsZero() && e.Since.Before(prev.Time) {
			t.Errorf("summaries overlap: %v after %v", e.Since, prev.Time)
		}
		prev = e
	}
	if lines := len(all) - summaries; lines > 10+5*10+5 {
		t.Errorf("%d lines written in 5 minutes with a budget of 10 a minute", lines)
	}
}

// What is counted is written after SummaryEvery even when the server goes
// quiet and nobody closes the log.
func TestSummaryWrittenWhenQuiet(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	defer l.Close()
	l.NoiseBudget, l.SummaryEvery = 1, 20*time.Millisecond
	now := time.Now().UTC()
	for i := range 5 {
		l.Append(attempt(now, "nosy", "", fmt.Sprintf("/missing/%d", i), ReachIgnored))
	}
	apptest.Eventually(t, "the summary of four attempts", func() (bool, string) {
		all, _ := Read(dir, "nosy")
		total, summaries := accounted(all, "nosy")
		return total == 5 && summaries == 1, fmt.Sprintf("%+v", all)
	})
}

// A million distinct attempts, an hour of them, after the person's
// decisions and a server's requests: the noise rotates its own file many
// times, the trail keeps every line of the decisions, and both stay within
// their caps.
func TestDecisionsSurviveAFlood(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	l.MaxSize, l.NoiseMaxSize = 16<<10, 16<<10
	request := attempt(t0, "nosy", "/home/p/secret", "/home/p/secret/a.txt", ReachUnasked)
	request.Request = true
	kept := []Entry{
		{Time: t0, Server: "nosy", Via: ViaConfinement, Decided: ConfinedOn, Op: "command-line"},
		{Time: t0, Server: "nosy", Via: ViaRootsList, Roots: []string{"file:///home/p/project"}},
		request,
		attempt(t0, "nosy", "/home/p/secret", "/home/p/secret/b.txt", ReachRefused),
		attempt(t0, "nosy", "/home/p/docs", "/home/p/docs/x", ReachOnce),
	}
	for _, e := range kept {
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	const n = 1_000_000
	for i := range n {
		at := t0.Add(time.Second + time.Duration(i)*3600*time.Millisecond/1000) // an hour
		decided, folder := ReachIgnored, ""
		switch i % 4 {
		case 1:
			decided, folder = ReachRefused, "/home/p/secret"
		case 2:
			decided, folder = ReachLimited, fmt.Sprintf("/home/p/d%d", i%1000)
		}
		if err := l.Append(attempt(at, "nosy", folder, fmt.Sprintf("/home/p/secret/missing-%d", i), decided)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if size := sizeOf(t, filepath.Join(dir, name)); size > 16<<10 {
			t.Errorf("%s is %d bytes, over its cap", name, size)
		}
	}
	if sizeOf(t, filepath.Join(dir, NoiseRotatedName)) == 0 {
		t.Error("the noise never rotated: the test floods too little")
	}
	all, _ := Read(dir, "nosy")
	for _, want := range kept {
		found := false
		for _, e := range all {
			found = found || e.same(want) && e.Time.Equal(want.Time)
		}
		if !found {
			t.Errorf("lost after the flood: %+v", want)
		}
	}
	trail, _ := readFile(filepath.Join(dir, FileName), "", nil)
	if len(trail) != len(kept) {
		t.Errorf("the trail holds %d lines, want the %d kept", len(trail), len(kept))
	}
}

// Two logs on one folder (two processes: the app and a bridge) rotate the
// same files: a writer whose file was rotated by the other writes to the
// new file, never to the rotated one, no file passes its cap by more than
// the lines written at the same moment, and a full file is rotated once.
func TestTwoWritersRotate(t *testing.T) {
	dir := t.TempDir()
	a, b := NewLog(dir), NewLog(dir)
	a.MaxSize, b.MaxSize = 2000, 2000
	line := func(server string, i int) Entry {
		return Entry{Time: t0.Add(time.Duration(i) * time.Second), Server: server, Via: ViaRootsList, Roots: []string{fmt.Sprintf("file:///r/%d", i)}}
	}
	b.Append(line("b", 0)) // b's file is open
	for i := range 40 {
		long := line("a", i)
		long.Roots = append(long.Roots, "file:///"+strings.Repeat("x", 200))
		a.Append(long) // a's long lines leave room for b's short one in the file it rotated
	}
	if sizeOf(t, filepath.Join(dir, RotatedName)) == 0 {
		t.Fatal("a never rotated")
	}
	b.Append(line("b", 1))
	cur, _ := readFile(filepath.Join(dir, FileName), "b", nil)
	if len(cur) != 1 || cur[0].Roots[0] != "file:///r/1" {
		t.Errorf("b wrote its line elsewhere than the current file: %+v", cur)
	}
	// Both at once, many times round.
	done := make(chan struct{})
	for _, l := range []*Log{a, b} {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 2000 {
				l.Append(line(fmt.Sprint(l == a), 100+i))
			}
		}()
	}
	<-done
	<-done
	a.Close()
	b.Close()
	for _, name := range []string{FileName, RotatedName} {
		if size := sizeOf(t, filepath.Join(dir, name)); size > 2000+2*60 {
			t.Errorf("%s is %d bytes, over its cap of 2000", name, size)
		}
	}
	// Rotated once at a time: a second rename would have put a file just
	// started in place of the full one.
	if size := sizeOf(t, filepath.Join(dir, RotatedName)); size < 2000-2*120 {
		t.Errorf("%s is %d bytes: rotated twice over", RotatedName, size)
	}
	all, _ := Read(dir, "")
	var out bytes.Buffer
	if err := RunCommand(nil, dir, &out); err != nil || strings.Count(out.String(), "\n") != len(all) {
		t.Errorf("audit printed %d lines for %d entries: %v", strings.Count(out.String(), "\n"), len(all), err)
	}
}

// Read merges the trail and the noise in time order.
func TestReadMergesInTimeOrder(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir)
	request := attempt(t0.Add(2*time.Second), "nosy", "/s", "/s/a", ReachUnasked)
	request.Request = true
	l.Append(attempt(t0.Add(1*time.Second), "nosy", "", "/etc/a", ReachIgnored))
	l.Append(request)
	l.Append(attempt(t0.Add(3*time.Second), "nosy", "", "/etc/b", ReachIgnored))
	l.Append(Entry{Time: t0.Add(4 * time.Second), Server: "nosy", Via: ViaConfinement, Decided: ConfinedOff, Op: "window"})
	l.Close()
	all, _ := Read(dir, "")
	var got []string
	for _, e := range all {
		got = append(got, e.Tried+e.Decided)
	}
	if want := "/etc/anot asked,/s/aunasked,/etc/bnot asked,run unconfined"; strings.Join(got, ",") != want {
		t.Errorf("read %v, want %s", got, want)
	}
	var out bytes.Buffer
	RunCommand(nil, dir, &out)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.HasSuffix(lines[1], " nosy - reach file:///s tried read /s/a: unasked (new request)") ||
		!strings.HasSuffix(lines[3], " nosy - confinement run unconfined (by window)") {
		t.Errorf("audit printed:\n%s", out.String())
	}
}
