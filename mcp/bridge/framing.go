package bridge

// JSON-RPC framing: one message a line, batches, error responses.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"rootkeeper/app/words"
)

// header is the part of a message the bridge reads.
type header struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

func (h header) isRequest() bool { return h.Method != "" && len(h.ID) > 0 }

func (h header) isResponse() bool { return h.Method == "" && len(h.ID) > 0 }

// wireError is a JSON-RPC error object, its fields in the usual order.
type wireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func errorResponse(id json.RawMessage, e *jsonrpc.Error) any {
	return struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{e.Code, e.Message, e.Data}}
}

func errorResponseRaw(id json.RawMessage, e *jsonrpc.Error) json.RawMessage {
	out, _ := json.Marshal(errorResponse(id, e))
	return out
}

// splitBatch returns the messages of a line: the elements of a batch, or
// the line itself.
func splitBatch(line []byte) []json.RawMessage {
	t := bytes.TrimSpace(line)
	if len(t) > 0 && t[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(t, &batch) == nil {
			return batch
		}
	}
	return []json.RawMessage{t}
}

// mapBatch applies one to each message of line (a batch or one message)
// and returns the line to send on: unchanged when nothing changed, nil
// when nothing is left.
func mapBatch(line []byte, one func(json.RawMessage) json.RawMessage) []byte {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || t[0] != '[' {
		out := one(t)
		if out == nil {
			return nil
		}
		return out
	}
	batch := splitBatch(t)
	var kept []json.RawMessage
	changed := false
	for _, m := range batch {
		out := one(m)
		if out == nil || !bytes.Equal(out, m) {
			changed = true
		}
		if out != nil {
			kept = append(kept, out)
		}
	}
	if !changed {
		return line
	}
	if len(kept) == 0 {
		return nil
	}
	out, _ := json.Marshal(kept)
	return out
}

// lineWriter writes whole lines, one writer at a time.
type lineWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func newLineWriter(w io.Writer) *lineWriter { return &lineWriter{w: bufio.NewWriterSize(w, 64<<10)} }

func (l *lineWriter) write(line []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(line); err != nil {
		return err
	}
	if err := l.w.WriteByte('\n'); err != nil {
		return err
	}
	return l.w.Flush()
}

func (l *lineWriter) writeJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return l.write(data)
}

// lineReader reads newline-delimited messages of up to maxLine bytes.
type lineReader struct{ r *bufio.Reader }

func newLineReader(r io.Reader) *lineReader { return &lineReader{r: bufio.NewReaderSize(r, 1<<20)} }

// next returns the next non-empty line, without its newline. A line that
// fits in the reader's buffer, as nearly all do, is lent from it: it is
// valid until the next call, and whoever keeps any of it copies it. A line
// longer than maxLine is read to its end and dropped, and next returns a
// *tooLongError holding its first bytes: the reader can go on.
func (l *lineReader) next() ([]byte, error) {
	for {
		chunk, err := l.r.ReadSlice('\n')
		if err == nil {
			if line := bytes.TrimRight(chunk, "\r\n"); !blank(line) {
				return line, nil
			}
			continue
		}
		var buf []byte
		for {
			if len(buf)+len(chunk) > maxLine {
				return nil, l.skip(append(buf, chunk...), err)
			}
			if err == bufio.ErrBufferFull {
				buf = append(buf, chunk...)
				chunk, err = l.r.ReadSlice('\n')
				continue
			}
			buf = append(buf, chunk...)
			if err != nil {
				if !blank(buf) && errors.Is(err, io.EOF) {
					return bytes.TrimRight(buf, "\r\n"), nil
				}
				return nil, err
			}
			break
		}
		buf = bytes.TrimRight(buf, "\r\n")
		if !blank(buf) {
			return buf, nil
		}
	}
}

// blank reports whether b is only white space.
func blank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// shown bounds and neutralises a name a host or server gave of itself
// (clientInfo, protocol version): it is shown in the app, in status, and
// written into requests.
func shown(s string) string {
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return words.SafeText(s)
}
