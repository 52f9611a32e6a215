package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"rootkeeper/app"
)

// bufConn is a stdin that keeps what is written, and always has room (a
// rawio writer's TryWrite).
type bufConn struct{ bytes.Buffer }

func (*bufConn) Close() error { return nil }

func (b *bufConn) TryWrite(p []byte) (int, error) { return b.Write(p) }

// A roots/list answered by the connection is the line the SDK's dispatch
// would write (the same envelope, the result encoded as the SDK encodes
// it), for numeric and string ids; the encoding kept for one list is not
// given for another.
func TestRootsAnsweredInTheConnectionAreTheSDKsAnswer(t *testing.T) {
	m := &Manager{}
	lists := [][]app.Root{
		{{Path: "/src/a", Name: "a"}},
		{{Path: "/src/a", Name: "a"}, {Path: "/src/b c#d", Name: "b <&> c"}},
		{},
		{{Path: "/src/a", Name: "a"}},
	}
	ids := []jsonrpc.ID{id(float64(7)), id("x\"<y>"), id(float64(-1)), id("")}
	for i, roots := range lists {
		stdin := &bufConn{}
		c := &stdioConn{stdin: stdin, backlog: NewBacklog(BacklogLimits{}), unanswered: map[jsonrpc.ID]int{},
			roots: func(reply func(json.RawMessage, *jsonrpc.Error)) { reply(m.encodeRoots(roots), nil) }}
		req := &jsonrpc.Request{ID: ids[i], Method: methodListRoots}
		if err := c.answerRoots(req, 100); err != nil {
			t.Fatal(err)
		}
		// As the SDK's jsonrpc2 encodes a result (marshalToRaw).
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.Encode(RootsResult(roots))
		line, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: ids[i], Result: bytes.TrimRight(want.Bytes(), "\n")})
		if err != nil {
			t.Fatal(err)
		}
		if got := stdin.String(); got != string(line)+"\n" {
			t.Errorf("list %d: wrote\n%s\nwant\n%s", i, got, line)
		}
		msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(stdin.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		var res sdk.ListRootsResult
		if err := json.Unmarshal(msg.(*jsonrpc.Response).Result, &res); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(RootsResult(roots), &res); diff != "" {
			t.Errorf("list %d (-want +got):\n%s", i, diff)
		}
		if len(c.unanswered) != 0 {
			t.Errorf("list %d: the request still counts against the backlog", i)
		}
	}
}

// A refusal is answered as the SDK would answer an error.
func TestRootsRefusedInTheConnection(t *testing.T) {
	stdin := &bufConn{}
	refusal := &jsonrpc.Error{Code: CodeTooManyRequests, Message: "too many"}
	c := &stdioConn{stdin: stdin, backlog: NewBacklog(BacklogLimits{}), unanswered: map[jsonrpc.ID]int{},
		roots: func(reply func(json.RawMessage, *jsonrpc.Error)) { reply(nil, refusal) }}
	if err := c.answerRoots(&jsonrpc.Request{ID: id(float64(3)), Method: methodListRoots}, 10); err != nil {
		t.Fatal(err)
	}
	want, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id(float64(3)), Error: refusal})
	if got := stdin.String(); got != string(want)+"\n" {
		t.Errorf("wrote %s, want %s", got, want)
	}
}

// A reply that comes later, from another goroutine (the audit log's
// writer, once the answer's line is written), is written then: the
// request counts against the backlog until it is, and the read that
// asked returned at once.
func TestRootsRepliedLaterInTheConnection(t *testing.T) {
	stdin := &lockedConn{}
	replied := make(chan struct{})
	var later func()
	c := &stdioConn{stdin: stdin, backlog: NewBacklog(BacklogLimits{}), unanswered: map[jsonrpc.ID]int{},
		roots: func(reply func(json.RawMessage, *jsonrpc.Error)) {
			later = func() { reply(json.RawMessage(`{"roots":[]}`), nil); close(replied) }
		}}
	if err := c.answerRoots(&jsonrpc.Request{ID: id(float64(4)), Method: methodListRoots}, 10); err != nil {
		t.Fatal(err)
	}
	if got := stdin.String(); got != "" {
		t.Fatalf("wrote %q before the reply", got)
	}
	c.pendMu.Lock()
	waiting := len(c.unanswered)
	c.pendMu.Unlock()
	if waiting != 1 {
		t.Fatalf("%d requests count against the backlog before the reply, want 1", waiting)
	}
	go later()
	<-replied
	if got, want := stdin.String(), `{"jsonrpc":"2.0","id":4,"result":{"roots":[]}}`+"\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	c.pendMu.Lock()
	if len(c.unanswered) != 0 {
		t.Error("the request still counts against the backlog once answered")
	}
	c.pendMu.Unlock()

	// A reply on another goroutine while the read is returning (under
	// -race: the read's result and the reply are not shared unguarded).
	stdin2, replied2 := &lockedConn{}, make(chan struct{})
	c2 := &stdioConn{stdin: stdin2, backlog: NewBacklog(BacklogLimits{}), unanswered: map[jsonrpc.ID]int{},
		roots: func(reply func(json.RawMessage, *jsonrpc.Error)) {
			go func() { reply(json.RawMessage(`{"roots":[]}`), nil); close(replied2) }()
		}}
	if err := c2.answerRoots(&jsonrpc.Request{ID: id(float64(5)), Method: methodListRoots}, 10); err != nil {
		t.Fatal(err)
	}
	<-replied2
	if got, want := stdin2.String(), `{"jsonrpc":"2.0","id":5,"result":{"roots":[]}}`+"\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// lockedConn is a bufConn safe to write from one goroutine while another
// reads it.
type lockedConn struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (*lockedConn) Close() error { return nil }

func (b *lockedConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedConn) TryWrite(p []byte) (int, error) { return b.Write(p) }

func (b *lockedConn) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Only a roots/list call whose params the SDK would take is answered in
// the connection; anything else goes to the SDK, which answers as it does.
func TestWhichRootsListTheConnectionAnswers(t *testing.T) {
	for _, tc := range []struct {
		method string
		id     jsonrpc.ID
		params string
		want   bool
	}{
		{methodListRoots, id(float64(1)), "", true},
		{methodListRoots, id(float64(1)), "null", true},
		{methodListRoots, id(float64(1)), "{}", true},
		{methodListRoots, id(float64(1)), ` {"_meta":{"progressToken":1}} `, true},
		{methodListRoots, id(float64(1)), `{"_meta":5}`, false},
		{methodListRoots, id(float64(1)), `5`, false},
		{methodListRoots, id(float64(1)), `[]`, false},
		{methodListRoots, jsonrpc.ID{}, "{}", false},
		{"roots/List", id(float64(1)), "{}", false},
		{"ping", id(float64(1)), "{}", false},
	} {
		req := &jsonrpc.Request{ID: tc.id, Method: tc.method, Params: json.RawMessage(tc.params)}
		if got := isRootsList(req); got != tc.want {
			t.Errorf("%s %v %q: %v, want %v", tc.method, tc.id.Raw(), tc.params, got, tc.want)
		}
	}
}

// id is v as a JSON-RPC id.
func id(v any) jsonrpc.ID {
	i, err := jsonrpc.MakeID(v)
	if err != nil {
		panic(err)
	}
	return i
}

// recordingTransport passes what the client writes through a stdioConn's
// Write into wrote too: the bytes a stdio server would read.
type recordingTransport struct {
	inner sdk.Transport
	wrote *stdioConn
}

func (t *recordingTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.inner.Connect(ctx)
	return &recordingConn{Connection: c, wrote: t.wrote}, err
}

type recordingConn struct {
	sdk.Connection
	wrote *stdioConn
}

func (c *recordingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := c.wrote.Write(ctx, msg); err != nil {
		return err
	}
	return c.Connection.Write(ctx, msg)
}

// The list_changed a wired adapter writes on a stdio server's connection
// is the line the SDK's client writes there when its roots change.
func TestListChangedInTheConnectionIsTheSDKs(t *testing.T) {
	ctx := context.Background()
	server := sdk.NewServer(&sdk.Implementation{Name: "s", Version: "1"}, nil)
	ct, st := sdk.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	sdkWrote := &bufConn{}
	client := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"},
		&sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{RootsV2: &sdk.RootCapabilities{ListChanged: true}}})
	cs, err := client.Connect(ctx, &recordingTransport{inner: ct, wrote: &stdioConn{stdin: sdkWrote}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	sdkWrote.Reset() // the handshake
	client.AddRoots(&sdk.Root{URI: "file:///src/a", Name: "a"})
	ours := &bufConn{}
	if err := (&stdioConn{stdin: ours}).notifyRootsChanged(); err != nil {
		t.Fatal(err)
	}
	if sdkWrote.String() != ours.String() {
		t.Errorf("wrote\n%s\nthe SDK writes\n%s", ours, sdkWrote)
	}
}
