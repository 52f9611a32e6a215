package audit

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendEntry appends e as one line of JSON (without its line end) to b,
// byte for byte as json.Marshal writes it (TestAppendEntryIsMarshal), but
// without its reflection: fifty answers to one grant encoded fifty times.
// A summary's counts, a time outside years 0-9999 and strings that need
// escaping go through json.Marshal.
func appendEntry(b []byte, e Entry) ([]byte, error) {
	if e.Unwritten != nil || !plainTime(e) {
		return marshalEntry(b, e)
	}
	start := len(b)
	b = append(b, `{"time":"`...)
	b = e.Time.AppendFormat(b, "2006-01-02T15:04:05.999999999Z07:00")
	b = append(b, `","server":`...)
	ok := true
	str := func(s string) {
		if ok = ok && plain(s); ok {
			b = append(append(append(b, '"'), s...), '"')
		}
	}
	str(e.Server)
	if e.ProtocolVersion != "" {
		b = append(b, `,"protocolVersion":`...)
		str(e.ProtocolVersion)
	}
	b = append(b, `,"roots":`...)
	if e.Roots == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, r := range e.Roots {
			if i > 0 {
				b = append(b, ',')
			}
			str(r)
		}
		b = append(b, ']')
	}
	if e.Error != "" {
		b = append(b, `,"error":`...)
		str(e.Error)
	}
	b = append(b, `,"via":`...)
	str(e.Via)
	if e.Repeated != 0 {
		b = strconv.AppendInt(append(b, `,"repeated":`...), int64(e.Repeated), 10)
	}
	for _, f := range [...]struct{ key, v string }{{`,"tried":`, e.Tried}, {`,"op":`, e.Op}, {`,"decided":`, e.Decided}} {
		if f.v != "" {
			b = append(b, f.key...)
			str(f.v)
		}
	}
	if e.Request {
		b = append(b, `,"request":true`...)
	}
	if e.Absent {
		b = append(b, `,"absent":true`...)
	}
	if !e.Since.IsZero() {
		b = append(b, `,"since":"`...)
		b = append(e.Since.AppendFormat(b, "2006-01-02T15:04:05.999999999Z07:00"), '"')
	}
	if !ok {
		return marshalEntry(b[:start], e)
	}
	return append(b, '}'), nil
}

// plainTime reports whether e's times are written by Time.MarshalJSON as
// by AppendFormat (years 0-9999, a zone less than a day away).
func plainTime(e Entry) bool {
	ok := func(t time.Time) bool {
		_, off := t.Zone()
		return 0 <= t.Year() && t.Year() <= 9999 && -24*3600 < off && off < 24*3600
	}
	return ok(e.Time) && (e.Since.IsZero() || ok(e.Since))
}

// plain reports whether json.Marshal writes s as it is between quotes:
// printable ASCII without a quote, a backslash or what it escapes for
// HTML.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// marshalEntry appends e as json.Marshal writes it.
func marshalEntry(b []byte, e Entry) ([]byte, error) {
	line, err := json.Marshal(e)
	if err != nil {
		return b, fmt.Errorf("audit: encoding entry: %w", err)
	}
	return append(b, line...), nil
}
