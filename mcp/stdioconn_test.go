package mcp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"rootkeeper/app/apptest"
)

// replay starts a real process that writes input to its stdout and copies
// its stdin to a file, and connects to it; the returned func reads that
// file once the connection is closed.
func replay(t *testing.T, input []byte, version string) (*stdioConn, func() string) {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.WriteFile(in, input, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `cat "$0"; cat > "$1"`, in, out)
	c, err := startStdio(cmd, time.Second, func() string { return version }, BacklogLimits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, func() string {
		c.Close()
		data, _ := os.ReadFile(out)
		return string(data)
	}
}

func readN(t *testing.T, c *stdioConn, n int) []jsonrpc.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), apptest.Patience)
	defer cancel()
	var msgs []jsonrpc.Message
	for range n {
		m, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", len(msgs)+1, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func readErr(t *testing.T, c *stdioConn) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), apptest.Patience)
	defer cancel()
	for {
		if _, err := c.Read(ctx); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("no error within %v (hung?)", apptest.Patience)
			}
			return err
		}
	}
}

// Messages as servers write them: one a line, pretty-printed over several,
// a response with an error, one with an empty method; each decoded as the
// SDK decodes it.
func TestStdioConnReadsWhatServersWrite(t *testing.T) {
	c, _ := replay(t, []byte(`{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{}}
{
  "jsonrpc": "2.0",
  "method": "notifications/roots/list_changed"
}
{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no","data":{"x":1}}}
{"jsonrpc":"2.0","id":2,"result":{"ok":true}}
{"jsonrpc":"2.0","id":3,"method":""}
`), "")
	msgs := readN(t, c, 5)
	if r, ok := msgs[0].(*jsonrpc.Request); !ok || r.Method != "roots/list" || r.ID.Raw() != int64(1) || string(r.Params) != "{}" {
		t.Errorf("first: %#v", msgs[0])
	}
	if r, ok := msgs[1].(*jsonrpc.Request); !ok || r.Method != "notifications/roots/list_changed" || r.IsCall() {
		t.Errorf("pretty-printed notification: %#v", msgs[1])
	}
	var werr *jsonrpc.Error
	if r, ok := msgs[2].(*jsonrpc.Response); !ok || r.ID.Raw() != "a" || !errors.As(r.Error, &werr) || werr.Code != -32601 || string(werr.Data) != `{"x":1}` {
		t.Errorf("error response: %#v", msgs[2])
	}
	if r, ok := msgs[3].(*jsonrpc.Response); !ok || r.Error != nil || string(r.Result) != `{"ok":true}` {
		t.Errorf("result: %#v", msgs[3])
	}
	if r, ok := msgs[4].(*jsonrpc.Request); !ok || r.Method != "" {
		t.Errorf("a request with an empty method: %#v", msgs[4])
	}
}

// Keys are read as spelled: a "Method" is no method, so the message is a
// response, never a roots/list request (Go's encoding/json would read it
// as one).
func TestStdioConnReadsExactKeys(t *testing.T) {
	c, _ := replay(t, []byte(`{"jsonrpc":"2.0","id":1,"Method":"roots/list"}`+"\n"), "")
	if m := readN(t, c, 1)[0]; func() bool { _, ok := m.(*jsonrpc.Request); return ok }() {
		t.Fatalf("\"Method\" was read as a method: %#v", m)
	}
}

// A batch of requests is answered with one batch, in the batch's order,
// once every request in it is answered; notifications in it need no answer.
func TestStdioConnAnswersABatchTogether(t *testing.T) {
	c, written := replay(t, []byte(`[{"jsonrpc":"2.0","id":1,"method":"roots/list"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"b","method":"ping"}]`+"\n"), "2025-03-26")
	msgs := readN(t, c, 3)
	ids := []jsonrpc.ID{}
	for _, m := range msgs {
		if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) != 2 {
		t.Fatalf("calls in the batch: %v", ids)
	}
	ctx := context.Background()
	if err := c.Write(ctx, &jsonrpc.Response{ID: ids[1], Result: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, &jsonrpc.Response{ID: ids[0], Result: []byte(`{"roots":[]}`)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, &jsonrpc.Request{Method: "notifications/after"}); err != nil {
		t.Fatal(err)
	}
	got := written()
	want := `[{"jsonrpc":"2.0","id":1,"result":{"roots":[]}},{"jsonrpc":"2.0","id":"b","result":{}}]` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/after"}` + "\n"
	if got != want {
		t.Fatalf("written:\n%s\nwant:\n%s", got, want)
	}
}

// What the SDK refuses is refused: batches from 2025-06-18 on, an empty
// batch, two messages on one line, a missing or wrong version, nesting past
// 1,000 levels, a message past MaxMessageBytes.
func TestStdioConnRefusesWhatTheSDKRefuses(t *testing.T) {
	deep := `{"jsonrpc":"2.0","method":"x","params":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + "}\n"
	long := append([]byte(`{"jsonrpc":"2.0","method":"x","params":"`), bytes.Repeat([]byte("a"), MaxMessageBytes)...)
	long = append(long, "\"}\n"...)
	for _, tc := range []struct {
		name, version string
		input         []byte
		want          string
	}{
		{"batch on 2025-06-18", "2025-06-18", []byte(`[{"jsonrpc":"2.0","method":"x"}]` + "\n"), "batching is not supported"},
		{"empty batch", "", []byte("[]\n"), "empty batch"},
		{"two on a line", "", []byte(`{"jsonrpc":"2.0","method":"x"} {"jsonrpc":"2.0","method":"y"}` + "\n"), "trailing data"},
		{"no version", "", []byte(`{"id":1,"method":"x"}` + "\n"), "version tag"},
		{"a response without an id", "", []byte(`{"jsonrpc":"2.0","result":{}}` + "\n"), "without an id"},
		{"too deep", "", []byte(deep), "deeper than 1000"},
		{"too long", "", long, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := replay(t, tc.input, tc.version)
			if err := readErr(t, c); !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want one with %q", err, tc.want)
			}
		})
	}
	// Nesting of exactly 1,000 levels is read.
	ok := `{"jsonrpc":"2.0","method":"x","params":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + "}\n"
	c, _ := replay(t, []byte(ok), "")
	readN(t, c, 1)
}

// Close ends a server that ignores the end of its input: SIGTERM after the
// terminate duration.
func TestStdioConnCloseEndsAServerThatLingers(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap 'exit 7' TERM; while :; do sleep 0.05; done`)
	c, err := startStdio(cmd, 200*time.Millisecond, func() string { return "" }, BacklogLimits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Close()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Fatalf("Close: %v, want the server's exit on SIGTERM (status 7)", err)
	}
	if _, err := c.Read(context.Background()); err == nil {
		t.Fatal("Read after Close returned a message")
	}
}

// A Read waiting for a server that says nothing, as the SDK reads (a
// context that never ends), is ended by Close with the end of the input,
// although a grandchild still holds the server's stdout.
func TestStdioConnCloseEndsAWaitingRead(t *testing.T) {
	cmd := exec.Command("sh", "-c", `sleep 3 & exec cat > /dev/null`)
	c, err := startStdio(cmd, time.Second, func() string { return "" }, BacklogLimits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	read := readAsync(c)
	select {
	case err := <-read:
		t.Fatalf("Read returned before Close: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	c.Close()
	select {
	case err := <-read:
		if err != io.EOF {
			t.Fatalf("Read after Close: %v, want io.EOF", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not end the waiting Read")
	}
}
