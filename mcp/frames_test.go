package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// streamFrames is the framing frameReader replaced: the stream decoder
// alone, through the frame limit, and the check of the byte after each
// value.
type streamFrames struct {
	lr  *frameLimit
	dec *json.Decoder
}

func (f *streamFrames) next() (json.RawMessage, error) { return streamNext(f.dec, f.lr) }

// chunks reads data in reads of the sizes cuts gives (in turn), as a pipe
// hands over what was written in several writes.
type chunks struct {
	data []byte
	cuts []byte
	n    int
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	size := len(c.data)
	if len(c.cuts) > 0 {
		size = int(c.cuts[c.n%len(c.cuts)])%97 + 1
		c.n++
	}
	size = min(size, len(p), len(c.data))
	copy(p, c.data[:size])
	c.data = c.data[size:]
	return size, nil
}

// The frames read, and the errors, are those of the stream decoder alone,
// whatever the input and however it is cut into reads.
func FuzzFrames(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"roots/list"}` + "\n" + `{"jsonrpc":"2.0","method":"x"}` + "\r\n",
		"{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"x\"\n}\n{\"a\":1}\n",
		`{"a":1} {"b":2}` + "\n",
		`{"a":"x\"}\n{"` + "\n" + `{"b":[1,2,{"c":"]"}]}` + "\n",
		"  \n\n\n\n\n\n {\"a\":1}\n[1,2]\n[]\n\"str\"\n12\n",
		`{"a":1}` + "\r" + `{"b":2}`,
		`{"a":tru}` + "\n" + `{"b":1}` + "\n",
		`{"a":1}`,
		`{"a":` + "\n",
		"\x00{}\n",
	} {
		f.Add([]byte(s), []byte{5, 1, 200, 48})
		f.Add([]byte(s), []byte{})
	}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		want := &streamFrames{lr: &frameLimit{r: &chunks{data: bytes.Clone(data), cuts: cuts}, limit: MaxMessageBytes}}
		want.dec = json.NewDecoder(want.lr)
		got := newFrameReader(&chunks{data: bytes.Clone(data), cuts: cuts}, MaxMessageBytes)
		for i := 0; ; i++ {
			wraw, werr := want.next()
			graw, gerr := got.next()
			if !bytes.Equal(wraw, graw) || (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
				t.Fatalf("frame %d of %q: %q, %v; the stream decoder read %q, %v", i, data, graw, gerr, wraw, werr)
			}
			if werr != nil {
				return
			}
		}
	})
}

// A message longer than the limit is refused, fast or not; lines of
// whitespace count towards it.
func TestFramesRefuseWhatIsTooLong(t *testing.T) {
	for _, input := range []string{
		`{"a":"` + strings.Repeat("x", 300) + `"}` + "\n",
		strings.Repeat("\n", 300) + "{}\n",
		"{\n" + strings.Repeat(" ", 300) + "}\n",
	} {
		f := newFrameReader(strings.NewReader(`{"ok":1}`+"\n"+input), 200)
		if raw, err := f.next(); err != nil || string(raw) != `{"ok":1}` {
			t.Fatalf("first frame: %q, %v", raw, err)
		}
		if raw, err := f.next(); !errors.Is(err, errFrameTooLarge) {
			t.Errorf("%.20q...: %q, %v; want it refused", input, raw, err)
		}
	}
}

// A roots/list written plainly is decoded as decodeFrame decodes it;
// whatever else decodeFrame is asked.
func FuzzRootsListRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":666,"method":"roots/list"}`,
		`{"method":"roots/list","jsonrpc":"2.0","id":0}`,
		`{"jsonrpc":"2.0","id":"a-1","method":"roots/list","params":{}}`,
		`{"jsonrpc":"2.0","id":-5,"method":"roots/list","params":null}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"roots/list"}`,
		`{"jsonrpc":"2.0","id":1e3,"method":"roots/list"}`,
		`{"jsonrpc":"2.0","id":123456789012345678,"method":"roots/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"roots/list","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"roots/list"}`,
		`{"jsonrpc":"2.0","method":"roots/list"}`,
		`{"jsonrpc":"1.0","id":1,"method":"roots/list"}`,
		`{"jsonrpc":"2.0","id":"\u0041","method":"roots/list"}`,
		`{"jsonrpc":"2.0", "id":1,"method":"roots/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"roots/list","result":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		req, ok := rootsListRequest(raw)
		if !ok {
			return
		}
		if !json.Valid(raw) {
			return // never a frame
		}
		msgs, batch, err := decodeFrame(raw)
		if err != nil || batch || len(msgs) != 1 {
			t.Fatalf("%s: decoded here as %+v; decodeFrame: %v, %v, %d messages", raw, req, err, batch, len(msgs))
		}
		want, isReq := msgs[0].(*jsonrpc.Request)
		if !isReq || want.ID != req.ID || want.Method != req.Method || !bytes.Equal(want.Params, req.Params) || (want.Params == nil) != (req.Params == nil) {
			t.Fatalf("%s: decoded here as %#v; decodeFrame: %#v", raw, req, msgs[0])
		}
		if !isRootsList(req) {
			t.Fatalf("%s: decoded as a roots/list the connection does not answer", raw)
		}
	})
}
