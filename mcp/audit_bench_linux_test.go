package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
	"rootkeeper/app/audit"
)

// auditFloodOpens is the flood of BenchmarkAuditFlood: the issue's
// "1 M refused opens in a minute".
const auditFloodOpens = 1_000_000

// BenchmarkAuditFlood: a confined nosy, observed with nobody to ask, reads
// a file in a folder it was not given (a request, audited), then opens a
// million distinct missing paths there; with the audit log on, and with it
// off (the anchor), interleaved. Reports the flood's time both ways and
// their ratio, the opens a second, and the bytes the audit folder holds
// afterwards (goal ≤ 64 MB); it fails if the request's line is gone.
//
//	go test -run '^$' -bench AuditFlood -benchtime 1x ./mcp
func BenchmarkAuditFlood(b *testing.B) {
	needLandlock(b)
	bin := nosyServer(b)
	e := newEnv(b)
	srv := app.Server{Name: "nosy", Type: app.TransportStdio, Command: bin, Confine: true}
	e.update(func(s *app.State) error { return s.AddServer(srv) })
	root := mkRoot(b, "granted")
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	var audited, anchor []time.Duration
	var bytes int64
	b.ResetTimer()
	for i := range b.N {
		for _, on := range []bool{i%2 == 0, i%2 != 0} {
			took, size := auditFlood(b, e, client, srv, root, on)
			if on {
				audited, bytes = append(audited, took), max(bytes, size)
			} else {
				anchor = append(anchor, took)
			}
		}
	}
	b.StopTimer()
	a, o := apptest.Median(anchor), apptest.Median(audited)
	b.ReportMetric(o.Seconds(), "flood-s")
	b.ReportMetric(a.Seconds(), "no-audit-flood-s")
	b.ReportMetric(float64(o)/float64(a), "ratio")
	b.ReportMetric(auditFloodOpens/o.Seconds(), "opens/s")
	b.ReportMetric(float64(bytes), "audit-bytes")
	if bytes > 64<<20 {
		b.Errorf("the audit folder holds %d bytes after the flood", bytes)
	}
}

// auditFlood starts nosy confined and observed (audited into a folder of
// its own when on), makes its request and its flood, and returns the
// flood's time and the audit folder's size once the log is closed.
func auditFlood(b *testing.B, e *testEnv, client *sdk.Client, srv app.Server, root string, on bool) (time.Duration, int64) {
	secret := mkRoot(b, "secret")
	os.WriteFile(filepath.Join(secret, "a.txt"), []byte("A"), 0o600)
	dir := b.TempDir()
	var log *audit.Log
	if on {
		log = audit.NewLog(dir)
	}
	watch := NewReachWatch(e.core, log, nil, "nosy", e.dir)
	cmd, _ := StdioCommand(srv, &app.Snapshot{})
	t := &stdioTransport{cmd: cmd, terminate: time.Second, version: func() string { return "" }, proc: &process{}}
	_, obs, err := ObserveCommand(cmd, srv, []string{root}, e.dir)
	if err != nil {
		b.Fatal(err)
	}
	t.obs = &observed{obs: obs, watch: watch}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		b.Fatal(err)
	}
	try := func(op, path string) string {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "try", Arguments: map[string]any{"op": op, "path": path}})
		if err != nil || len(res.Content) == 0 {
			b.Fatalf("try %s %s: %v", op, path, err)
		}
		text, _ := res.Content[0].(*sdk.TextContent)
		return text.Text
	}
	if got := try("read", filepath.Join(secret, "a.txt")); !strings.Contains(got, "permission denied") {
		b.Fatalf("the read outside: %s", got)
	}
	began := time.Now()
	got := try("flood", fmt.Sprintf("%s:%d", secret, auditFloodOpens))
	took := time.Since(began)
	if !strings.Contains(got, fmt.Sprintf("%d missing", auditFloodOpens)) {
		b.Fatalf("the flood: %s", got)
	}
	cs.Close()
	watch.Pending.Wait()
	if !on {
		return took, 0
	}
	if err := log.Close(); err != nil {
		b.Fatal(err)
	}
	entries, err := audit.Read(dir, "nosy")
	if err != nil {
		b.Fatal(err)
	}
	kept := false
	for _, en := range entries {
		kept = kept || en.Tried == filepath.Join(secret, "a.txt") && en.Decided == audit.ReachUnasked && en.Request
	}
	if !kept {
		b.Fatalf("the request's line is gone after the flood (%d lines)", len(entries))
	}
	var size int64
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		if fi, err := f.Info(); err == nil {
			size += fi.Size()
		}
	}
	return took, size
}
