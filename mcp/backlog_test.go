package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"rootkeeper/app"
	"rootkeeper/app/apptest"
)

// requests is n roots/list requests, ids 1..n, one a line.
func requests(n int) []byte {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"roots/list","params":{}}`+"\n", i)
	}
	return []byte(b.String())
}

// readAsync reads one message on a goroutine of its own.
func readAsync(c *stdioConn) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		done <- err
	}()
	return done
}

func answer(t *testing.T, c *stdioConn, id int64) {
	t.Helper()
	jid, _ := jsonrpc.MakeID(float64(id))
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: jid, Result: []byte(`{"roots":[]}`)}); err != nil {
		t.Fatal(err)
	}
}

// connect starts a server that writes input and then reads (and keeps)
// whatever it is sent, with limits on its backlog.
func connect(t *testing.T, input []byte, version string, limits BacklogLimits, onHostile func(error)) *stdioConn {
	t.Helper()
	cmd := exec.Command("sh", "-c", `printf '%s' "$0"; cat > /dev/null`, string(input))
	c, err := startStdio(cmd, time.Second, func() string { return version }, limits, onHostile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// While as many requests as the backlog holds wait for their answers, the
// next message is not read; an answer makes room for one more.
func TestStdioConnStopsReadingWhileAnswersAreOwed(t *testing.T) {
	c := connect(t, requests(20), "", BacklogLimits{Requests: 8, Stall: time.Hour}, nil)
	readN(t, c, 8)
	next := readAsync(c)
	select {
	case err := <-next:
		t.Fatalf("a ninth request was read (%v) while eight waited for their answers", err)
	case <-time.After(200 * time.Millisecond):
	}
	answer(t, c, 3)
	select {
	case err := <-next:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(apptest.Patience):
		t.Fatal("an answer drained and the next request was still not read (hung?)")
	}
	if n, _ := c.backlog.Len(); n != 8 {
		t.Fatalf("backlog holds %d requests; want 8 (7 owed and the one just read)", n)
	}
}

// A server whose backlog stays full with no answer drained for the stall
// limit is found hostile: Read fails with a *HostileError, which onHostile
// hears too.
func TestStdioConnFindsAServerThatDoesNotReadHostile(t *testing.T) {
	var heard atomic.Pointer[error]
	c := connect(t, requests(20), "", BacklogLimits{Requests: 8, Stall: 100 * time.Millisecond}, func(err error) { heard.Store(&err) })
	readN(t, c, 8)
	err := readErr(t, c)
	var h *HostileError
	if !errors.As(err, &h) || h.Requests != 8 {
		t.Fatalf("Read: %v; want a HostileError for 8 requests", err)
	}
	if got := heard.Load(); got == nil || *got != err {
		t.Fatalf("onHostile heard %v", got)
	}
	if !strings.Contains(err.Error(), "hostile") || !strings.Contains(err.Error(), "8 requests") {
		t.Errorf("the status would say %q", err)
	}
}

// Answers that drain, however slowly, keep the server from being found
// hostile: each gives it the stall limit again; the limit passing with
// none is a stall. In a synctest bubble the clock moves only when every
// goroutine waits, so each answer comes exactly 1 ms within the limit.
func TestBacklogSlowReaderIsNotHostile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const stall = 300 * time.Millisecond
		b := NewBacklog(BacklogLimits{Requests: 2, Stall: stall})
		b.Add(1)
		b.Add(1)
		wait := func() <-chan error {
			done := make(chan error, 1)
			go func() { done <- b.Wait(context.Background(), nil) }()
			return done
		}
		began := time.Now()
		for i := range 10 {
			done := wait()
			time.Sleep(stall - time.Millisecond)
			b.Drain(1)
			if err := <-done; err != nil {
				t.Fatalf("answer %d, %v after the one before: %v", i+1, stall-time.Millisecond, err)
			}
			b.Add(1)
		}
		if took := time.Since(began); took < 3*stall {
			t.Fatalf("ten slow answers took %v; the test proves nothing under %v", took, 3*stall)
		}

		done := wait()
		time.Sleep(stall - time.Millisecond)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Wait returned (%v) before the stall limit", err)
		default:
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		var h *HostileError
		if err := <-done; !errors.As(err, &h) || h.Requests != 2 || h.Stalled != stall {
			t.Fatalf("no answer for the stall limit: %v, want a HostileError for 2 requests after %v", err, stall)
		}
	})
}

// The answers to a batch go back together, so its requests count until the
// batch is written; a batch larger than the backlog is refused.
func TestStdioConnBatchCountsUntilWritten(t *testing.T) {
	batch := `[{"jsonrpc":"2.0","id":1,"method":"roots/list"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"roots/list"}]` + "\n"
	c := connect(t, append([]byte(batch), requests(1)...), "2025-03-26", BacklogLimits{Requests: 3, Stall: time.Hour}, nil)
	readN(t, c, 3)
	next := readAsync(c)
	answer(t, c, 1)
	answer(t, c, 3)
	select {
	case err := <-next:
		t.Fatalf("read on (%v) before the batch's answers were written", err)
	case <-time.After(200 * time.Millisecond):
	}
	answer(t, c, 2)
	if err := <-next; err != nil {
		t.Fatal(err)
	}

	big := connect(t, []byte(batch), "2025-03-26", BacklogLimits{Requests: 2, Stall: time.Hour}, nil)
	if err := readErr(t, big); !strings.Contains(err.Error(), "batch of 3 requests") {
		t.Fatalf("a batch larger than the backlog: %v", err)
	}
}

// The size of the requests counts too: one large request fills a small
// byte bound.
func TestBacklogBoundsBytes(t *testing.T) {
	b := NewBacklog(BacklogLimits{Requests: 100, Bytes: 1000, Stall: 50 * time.Millisecond})
	b.Add(999)
	if err := b.Wait(context.Background(), nil); err != nil {
		t.Fatalf("below the bound: %v", err)
	}
	b.Add(1)
	var h *HostileError
	if err := b.Wait(context.Background(), nil); !errors.As(err, &h) || h.Bytes != 1000 {
		t.Fatalf("at the byte bound: %v", err)
	}
	closed := make(chan struct{})
	close(closed)
	b.Drain(0) // a stale signal must not count as room
	if err := b.Wait(context.Background(), closed); err != io.EOF {
		t.Fatalf("closed: %v", err)
	}
	b.Drain(1)
	if err := b.Wait(context.Background(), nil); err != nil {
		t.Fatalf("after a drain: %v", err)
	}
}

// A managed server that floods roots/list and never reads the answers is
// stopped as hostile: its status says so, it is not started again by
// itself, and a restart tries again.
func TestManagerStopsAHostileServer(t *testing.T) {
	bin := hostileServer(t)
	e := newEnv(t)
	root := mkRoot(t, "r")
	e.addRoots(root)
	e.update(func(s *app.State) error {
		return s.AddServer(app.Server{Name: "deaf", Type: app.TransportStdio, Command: bin, Args: []string{"-mode", "deaf-flood"}})
	})
	e.grant("deaf", root)
	opts := e.fastOptions()
	opts.Backlog = BacklogLimits{Stall: 300 * time.Millisecond}
	e.start(opts)
	stopped := func(what string) app.ServerStatus {
		var st app.ServerStatus
		apptest.Eventually(t, what, func() (bool, string) {
			st = e.status("deaf")
			return st.State == app.ServerStopped && strings.Contains(st.Error, "hostile"), string(st.State) + " " + st.Error
		})
		return st
	}
	st := stopped("the flooder stopped as hostile")
	if !strings.Contains(st.Error, "64 requests") {
		t.Errorf("status error %q does not say what it did", st.Error)
	}
	// Not started again with backoff (50–400 ms here): still stopped, the
	// same stop, well after. An idle window: nothing is to happen, so
	// there is no event to wait for; it outlasts BackoffMax, the longest a
	// restart with backoff would take.
	time.Sleep(time.Second)
	if again := e.status("deaf"); again.State != app.ServerStopped || again.Restarts != st.Restarts || !again.Since.Equal(st.Since) {
		t.Fatalf("after a hostile stop: %+v, was %+v", again, st)
	}
	e.m.Restart("deaf")
	apptest.Eventually(t, "a restart tries again", func() (bool, string) {
		s := e.status("deaf")
		return s.Restarts > st.Restarts, fmt.Sprint(s.Restarts)
	})
	stopped("stopped as hostile again")
}
