package cli

import (
	"bufio"
	"encoding/json"
	"io"
)

// lineEncoder writes one JSON object per line through a buffer: scans print
// thousands of lines, and a write per line would dominate.
type lineEncoder struct {
	w   *bufio.Writer
	enc *json.Encoder
}

func newLineEncoder(w io.Writer) *lineEncoder {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &lineEncoder{w: bw, enc: enc}
}

func (l *lineEncoder) encode(v any) { l.enc.Encode(v) }

func (l *lineEncoder) flush() { l.w.Flush() }
