package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rootkeeper/app/audit"
)

// floodOpens is how many distinct missing paths the flood test opens:
// enough to have rotated the request out of the one-file log (~40 MB of
// lines against 2 × 10 MB), few enough for CI. BenchmarkAuditFlood (mcp)
// makes the million.
const floodOpens = 200_000

// TestAuditSurvivesAFlood: the person confines nosy, a host runs it
// through `rootkeeper bridge` with nobody to ask; it reads a file in a
// folder it was not given (a request, recorded for nobody), then another
// there (refused: the first refusal on that folder), then opens 200,000
// distinct missing paths there. After the session, `rootkeeper audit`
// still shows the decision, the request and the refusal, in time order,
// followed by summaries that account for every opened path; the noise
// written stayed within its budget and the audit files within 64 MB.
func TestAuditSurvivesAFlood(t *testing.T) {
	state, secret := reachSetup(t)
	mustRun(t, state, "servers", "confine", "nosy")
	h := startHostSession(t, state)
	a, b := filepath.Join(secret, "a.txt"), filepath.Join(secret, "b.txt")
	for _, f := range []string{a, b} {
		if line := <-h.try("read", f); !strings.Contains(line, "permission denied") {
			t.Fatalf("read %s: %s", f, line)
		}
	}
	began := time.Now()
	line := <-h.try("flood", fmt.Sprintf("%s:%d", secret, floodOpens))
	if !strings.Contains(line, fmt.Sprintf("%d missing, 0 refused, 0 opened, 0 other", floodOpens)) {
		t.Fatalf("the flood: %s", line)
	}
	t.Logf("%d opens in %v", floodOpens, time.Since(began).Round(time.Millisecond))
	h.in.Close() // the session ends: the bridge writes what it counted
	var entries []audit.Entry
	waitFor(t, "summaries accounting for the flood", func() bool {
		var err error
		if entries, err = audit.Read(state, "nosy"); err != nil {
			t.Fatal(err)
		}
		return flooded(entries, secret) >= floodOpens
	})

	out := mustRun(t, state, "audit", "--server", "nosy")
	at := 0
	for _, want := range []string{
		" nosy - confinement confined (by command-line)",
		" tried read " + a + ": unasked (new request)",
		" tried read " + b + ": refused",
		" nosy - summary ",
	} {
		i := strings.Index(out[at:], want)
		if i < 0 {
			t.Fatalf("`audit --server nosy` lacks %q after byte %d:\n%s", want, at, out)
		}
		at += i + len(want)
	}

	var total int64
	for _, name := range []string{audit.FileName, audit.RotatedName, audit.NoiseName, audit.NoiseRotatedName} {
		if fi, err := os.Stat(filepath.Join(state, name)); err == nil {
			total += fi.Size()
		}
	}
	if total > 64<<20 {
		t.Errorf("the audit files take %d bytes after the flood", total)
	}
	written, minutes := 0, entries[len(entries)-1].Time.Sub(entries[0].Time).Minutes()
	for _, e := range entries {
		if e.Via == audit.ViaReach && e.Decided == audit.ReachIgnored {
			written++
		}
	}
	if budget := audit.DefaultNoiseBudget * (int(minutes) + 2); written > budget {
		t.Errorf("%d attempts written in %.1f minutes; the budget is %d", written, minutes, budget)
	}
	t.Logf("%d bytes of audit; %d attempts written, the rest in summaries", total, written)
}

// flooded is how many of the flood's attempts (in secret) the entries
// stand for: the lines written and the summaries' counts of what was not
// asked.
func flooded(entries []audit.Entry, secret string) int {
	n := 0
	for _, e := range entries {
		switch {
		case e.Via == audit.ViaSummary:
			n += e.Unwritten[audit.ReachIgnored]
		case e.Via == audit.ViaReach && strings.HasPrefix(e.Tried, secret+"/flood-"):
			n += max(1, e.Repeated)
		}
	}
	return n
}
