package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// frameReader reads JSON values, each at most limit bytes and followed by
// a line end or nothing: the SDK's framing of a stdio connection (a stream
// decoder, and a check of the byte after each value).
//
// Most messages are one compact line. Those are framed here, from the
// reader's own buffer: a line that starts with an object or an array that
// ends on it, followed at once by its line end, and that is valid JSON is
// exactly the value the stream decoder would have read there, followed by
// what its check lets through. Anything else (a value over several lines,
// something after it on the line, invalid JSON, a line longer than
// fastLine) goes to the stream decoder, which reads on from the same
// buffer and says what is wrong as before. The stream decoder scanned each
// message twice and copied it through its own buffer: at fifty servers,
// framing their roots/list requests cost more than answering them
// (FuzzFrames checks the two agree on any input, cut into any reads).
type frameReader struct {
	r    io.Reader
	buf  []byte // read from r and not yet framed: buf[off:]
	off  int
	ends []int // where in buf each read from r ended, past off
	rerr error // what r returned after the bytes in buf

	lr *frameLimit
	// One stream decoder for the connection's life (the standard
	// library's, as the SDK's: it returns what the pipe holds, where
	// segmentio's waits to fill its buffer): it only finds where each
	// message ends; decodeFrame decodes it. It reads through buf first.
	// decoding: it has read, and may hold bytes read ahead.
	dec      *json.Decoder
	decoding bool
}

// fastLine bounds a line framed without the stream decoder, as does a
// quarter of the frame limit: a value that short never makes the decoder
// read past the limit (the decoder is refused only when it reads more,
// however the reads are cut), so one it would refuse for its length never
// comes this way.
const fastLine = 64 << 10

func newFrameReader(r io.Reader, limit int) *frameReader {
	f := &frameReader{r: r}
	f.lr = &frameLimit{r: bufferedReader{f}, limit: limit}
	f.dec = json.NewDecoder(f.lr)
	return f
}

// next reads the next value; after an error, it returns that error again.
func (f *frameReader) next() (json.RawMessage, error) {
	if f.decoding && f.decoderEmpty() {
		f.decoding = false
	}
	for !f.decoding {
		raw, more := f.fast()
		if raw != nil {
			f.lr.count = 0
			return raw, nil
		}
		if !more || f.rerr != nil {
			break
		}
		f.fill()
	}
	f.decoding = true
	return streamNext(f.dec, f.lr)
}

// streamNext reads the next value through the stream decoder dec, which
// reads through lr: the value must be followed by a line end or nothing;
// lr's count starts again for the next value.
func streamNext(dec *json.Decoder, lr *frameLimit) (json.RawMessage, error) {
	var raw json.RawMessage
	err := dec.Decode(&raw)
	if err == nil {
		var next [1]byte
		if n, rerr := dec.Buffered().Read(next[:]); n > 0 && next[0] != '\n' && next[0] != '\r' {
			err = errors.New("invalid trailing data at the end of a message")
		} else if rerr != nil && rerr != io.EOF {
			err = rerr
		}
	}
	lr.count = 0
	return raw, err
}

// decoderEmpty reports whether the stream decoder holds no byte read
// ahead: the next byte is then buf's, and a line may be framed here.
func (f *frameReader) decoderEmpty() bool {
	b, ok := f.dec.Buffered().(*bytes.Reader)
	return ok && b.Len() == 0
}

// fast frames the next value from buf when it is a line of its own (see
// frameReader): the value, or nil and whether more bytes could make one
// (no line end yet, and room for it).
func (f *frameReader) fast() (raw json.RawMessage, more bool) {
	p := f.buf[f.off:]
	lead := 0
	for lead < len(p) && lead <= 4 && isSpace(p[lead]) {
		lead++
	}
	if lead == len(p) {
		return nil, lead <= 4
	}
	if lead > 4 || (p[lead] != '{' && p[lead] != '[') {
		return nil, false
	}
	line := p[lead:]
	bound := min(fastLine, f.lr.limit/4) // see fastLine
	nl := bytes.IndexByte(line, '\n')
	if nl < 0 {
		// A value whole without its line end is the decoder's to give
		// now (a server may leave the line end out); otherwise more.
		return nil, lead+len(line) < bound && valueEnd(line) < 0
	}
	if lead+nl >= bound {
		return nil, false
	}
	end := valueEnd(line[:nl])
	if end < 0 || (end < nl && line[end] != '\r') || !json.Valid(line[:end]) {
		return nil, false
	}
	f.off += lead + end
	return bytes.Clone(line[:end]), false
}

// fill reads from r what it has into buf, keeping what is not framed yet.
func (f *frameReader) fill() {
	if f.off > 0 {
		f.buf = f.buf[:copy(f.buf, f.buf[f.off:])]
		kept := f.ends[:0]
		for _, end := range f.ends {
			if end > f.off {
				kept = append(kept, end-f.off)
			}
		}
		f.ends, f.off = kept, 0
	}
	if cap(f.buf)-len(f.buf) < 1024 {
		f.buf = append(f.buf, make([]byte, max(4096, cap(f.buf)))...)[:len(f.buf)]
	}
	n, err := f.r.Read(f.buf[len(f.buf):cap(f.buf)])
	if n > 0 {
		f.buf = f.buf[:len(f.buf)+n]
		f.ends = append(f.ends, len(f.buf))
	}
	if err != nil {
		f.rerr = err
	}
}

// bufferedReader is what the stream decoder reads: buf's bytes, then r's
// error if it had one, then r. buf's bytes are handed over as r gave them,
// a read at a time (less what was framed already), so that the decoder
// sees what it would have seen reading r itself: whether the byte after a
// value is there to check depends on it.
type bufferedReader struct{ f *frameReader }

func (b bufferedReader) Read(p []byte) (int, error) {
	f := b.f
	for len(f.ends) > 0 && f.ends[0] <= f.off {
		f.ends = f.ends[1:]
	}
	if f.off < len(f.buf) {
		n := copy(p, f.buf[f.off:f.ends[0]])
		f.off += n
		return n, nil
	}
	if f.rerr != nil {
		return 0, f.rerr
	}
	return f.r.Read(p)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// valueEnd is the index just past the object or array line starts with,
// or -1 when it does not end there (strings skipped, escapes included).
func valueEnd(line []byte) int {
	var n jsonNesting
	for i, c := range line {
		if n.step(c) < 0 && n.depth == 0 {
			return i + 1
		}
	}
	return -1
}

// jsonNesting follows how deep in objects and arrays JSON text is, a byte
// at a time, skipping what is inside strings (escapes included): the
// framing's search for a value's end and the depth bound both read it.
type jsonNesting struct {
	depth             int
	inString, escaped bool
}

// step takes the next byte and says what it did to the depth: 1 for an
// object or array opened, -1 for one closed, 0 for anything else.
func (n *jsonNesting) step(c byte) int {
	switch {
	case n.inString:
		switch {
		case n.escaped:
			n.escaped = false
		case c == '\\':
			n.escaped = true
		case c == '"':
			n.inString = false
		}
	case c == '"':
		n.inString = true
	case c == '{' || c == '[':
		n.depth++
		return 1
	case c == '}' || c == ']':
		n.depth--
		return -1
	}
	return 0
}

// readFrames reads f on a goroutine of its own until an error, which it
// sends last, so that Close never waits for a read of a pipe a grandchild
// still holds where closing the pipe would not end that read.
func readFrames(f *frameReader, closed <-chan struct{}) <-chan rawOrErr {
	out := make(chan rawOrErr)
	go func() {
		for {
			raw, err := f.next()
			select {
			case out <- rawOrErr{raw: raw, err: err}:
			case <-closed:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return out
}

// errFrameTooLarge is a message longer than MaxMessageBytes.
var errFrameTooLarge = fmt.Errorf("a message from the server is longer than %d bytes", MaxMessageBytes)

// frameLimit lets a decoder read at most limit bytes for one message.
type frameLimit struct {
	r     io.Reader
	limit int
	count int
}

func (f *frameLimit) Read(p []byte) (int, error) {
	if f.count >= f.limit {
		return 0, errFrameTooLarge
	}
	if len(p) > f.limit-f.count {
		p = p[:f.limit-f.count]
	}
	n, err := f.r.Read(p)
	f.count += n
	return n, err
}

// rootsListRequest is raw decoded as decodeFrame decodes it, when raw is
// a roots/list call written the plain way servers write it: one compact
// object of "jsonrpc":"2.0", an "id" (a whole number of at most 15 digits,
// or a string), "method":"roots/list" and perhaps "params":{}, in any
// order, each once, nothing else, its strings printable ASCII without
// escapes. ok is false for anything else, which decodeFrame decodes. raw
// is valid JSON (a frame). Fifty servers' requests were each scanned for
// their depth, decoded by reflection into a message with an id of any
// type, and their method decoded again (FuzzRootsListRequest checks that
// both decode alike).
func rootsListRequest(raw []byte) (req *jsonrpc.Request, ok bool) {
	if len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return nil, false
	}
	const version, id, method, params = 0, 1, 2, 3
	var seen [4]bool
	req = &jsonrpc.Request{Method: methodListRoots}
	p := raw[1 : len(raw)-1]
	for len(p) > 0 {
		key, rest, ok := plainString(p)
		if !ok || len(rest) == 0 || rest[0] != ':' {
			return nil, false
		}
		p = rest[1:]
		member := -1
		switch string(key) {
		case "jsonrpc":
			v, rest, ok := plainString(p)
			if !ok || string(v) != "2.0" {
				return nil, false
			}
			member, p = version, rest
		case "method":
			v, rest, ok := plainString(p)
			if !ok || string(v) != methodListRoots {
				return nil, false
			}
			member, p = method, rest
		case "id":
			if v, rest, ok := plainString(p); ok {
				req.ID, _ = jsonrpc.MakeID(string(v))
				member, p = id, rest
				break
			}
			n := 0
			for n < len(p) && (p[n] >= '0' && p[n] <= '9' || (n == 0 && p[n] == '-')) {
				n++
			}
			if n > 15 || (n < len(p) && p[n] != ',') {
				return nil, false // a fraction, an exponent, or too long to be a float64 exactly
			}
			v, err := strconv.ParseInt(string(p[:n]), 10, 64)
			if err != nil {
				return nil, false
			}
			req.ID, _ = jsonrpc.MakeID(float64(v)) // as decodeMessage makes it
			member, p = id, p[n:]
		case "params":
			if !bytes.HasPrefix(p, []byte("{}")) {
				return nil, false
			}
			req.Params, member, p = json.RawMessage(p[:2:2]), params, p[2:]
		}
		if member < 0 || seen[member] {
			return nil, false
		}
		seen[member] = true
		if len(p) > 0 {
			if p[0] != ',' || len(p) == 1 {
				return nil, false
			}
			p = p[1:]
		}
	}
	if !seen[version] || !seen[id] || !seen[method] {
		return nil, false
	}
	return req, true
}

// plainString reads the string p starts with when it is printable ASCII
// without an escape (a decoder changes nothing of it): its bytes and what
// follows it.
func plainString(p []byte) ([]byte, []byte, bool) {
	if len(p) == 0 || p[0] != '"' {
		return nil, p, false
	}
	for i := 1; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"':
			return p[1:i], p[i+1:], true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return nil, p, false
		}
	}
	return nil, p, false
}
