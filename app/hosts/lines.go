package hosts

import (
	"bytes"
	"fmt"
	"strings"
)

// lineDoc is the editing half shared by TOML and YAML: a field is a run of
// whole lines (its key, value and trailing comment), replaced, removed or
// inserted as lines, so every other byte of the file stays as it was. The
// format side says where each field's lines are (span) and re-parses after
// each edit (reparse).
type lineDoc struct {
	data []byte
	// span returns the byte range [start, end) of the field's lines, and
	// whether it exists.
	span func(key []string) (int, int, bool)
	// container says whether the object at key can take new lines, and
	// the indentation of its fields.
	container func(key []string) (indent string, ok bool, why string)
	// keyText renders a field's key as the format writes it.
	keyText func(name string) string
	sep     string // " = " (TOML) or ": " (YAML)
	// fieldNames lists the names of the fields of the object at key.
	fieldNames func(key []string) []string
	reparse    func([]byte) error
}

func (l *lineDoc) get(key []string) ([]byte, bool) {
	s, e, ok := l.span(key)
	if !ok {
		return nil, false
	}
	return bytes.Clone(l.data[s:e]), true
}

func (l *lineDoc) render(key []string, v any) ([]byte, error) {
	indent, ok, why := l.container(key[:len(key)-1])
	if !ok {
		return nil, fmt.Errorf("cannot edit %q: %s", strings.Join(key[:len(key)-1], "."), why)
	}
	// JSON's strings and arrays of strings are also TOML basic strings
	// and arrays, and YAML flow scalars and sequences.
	val, err := renderJSON(v)
	if err != nil {
		return nil, err
	}
	eol := "\n"
	if bytes.Contains(l.data, []byte("\r\n")) {
		eol = "\r\n" // a file written on Windows keeps its line ends
	}
	return []byte(indent + l.keyText(key[len(key)-1]) + l.sep + string(val) + eol), nil
}

func (l *lineDoc) put(key []string, after string, raw []byte) error {
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		raw = append(bytes.Clone(raw), '\n')
	}
	if s, e, ok := l.span(key); ok {
		if _, mid := l.itemStart(s); mid {
			// The first key of a list item: the "- " before it stays.
			raw = bytes.TrimLeft(raw, " ")
		}
		return l.splice(s, e, raw)
	}
	parent := key[:len(key)-1]
	if _, ok, why := l.container(parent); !ok {
		return fmt.Errorf("cannot edit %q: %s", strings.Join(parent, "."), why)
	}
	at := -1
	if after == atStart {
		for _, name := range l.fieldNames(parent) {
			if s, _, ok := l.span(append(clone(parent), name)); ok && (at < 0 || s < at) {
				at = s
			}
		}
	} else if after != "" {
		if _, e, ok := l.span(append(clone(parent), after)); ok {
			at = e
		}
	}
	if at < 0 {
		at = l.endOf(parent)
	}
	if at < 0 {
		return fmt.Errorf("cannot find where %q ends", strings.Join(parent, "."))
	}
	if col, mid := l.itemStart(at); mid {
		// Before the first key of a list item: the new field takes the
		// "- ", the old first key moves to the next line.
		raw = append(bytes.TrimLeft(raw, " "), strings.Repeat(" ", col)...)
	} else if at > 0 && l.data[at-1] != '\n' {
		raw = append([]byte("\n"), raw...)
	}
	return l.splice(at, at, raw)
}

// itemStart reports whether at is inside a line, after nothing but the
// indentation and "- " of a list item, and at which column.
func (l *lineDoc) itemStart(at int) (int, bool) {
	if at <= 0 || at >= len(l.data) || l.data[at-1] == '\n' {
		return 0, false
	}
	s, _ := fullLines(l.data, at, at)
	prefix := l.data[s:at]
	if len(bytes.Trim(prefix, " ")) == 0 || len(bytes.Trim(prefix, " -")) != 0 {
		return 0, false
	}
	return at - s, true
}

// endOf is the end of the last field of the object at key.
func (l *lineDoc) endOf(parent []string) int {
	end := -1
	for _, name := range l.fieldNames(parent) {
		if _, e, ok := l.span(append(clone(parent), name)); ok && e > end {
			end = e
		}
	}
	return end
}

func (l *lineDoc) del(key []string) error {
	s, e, ok := l.span(key)
	if !ok {
		return nil
	}
	if col, mid := l.itemStart(s); mid {
		// The first key of a list item: the next field moves up to take
		// its "- ".
		next := e
		for next < len(l.data) && l.data[next] == ' ' {
			next++
		}
		if next-e != col {
			return fmt.Errorf("cannot remove %q, the only field of its list item", strings.Join(key, "."))
		}
		e = next
	}
	return l.splice(s, e, nil)
}

func (l *lineDoc) splice(s, e int, raw []byte) error {
	out := make([]byte, 0, len(l.data)-(e-s)+len(raw))
	out = append(append(append(out, l.data[:s]...), raw...), l.data[e:]...)
	return l.reparse(out)
}

func (l *lineDoc) bytes() []byte { return l.data }

// fullLines widens [s, e) to whole lines, the end past its newline.
func fullLines(data []byte, s, e int) (int, int) {
	for s > 0 && data[s-1] != '\n' {
		s--
	}
	if e > s && e <= len(data) && data[e-1] == '\n' {
		return s, e
	}
	for e < len(data) && data[e] != '\n' {
		e++
	}
	if e < len(data) {
		e++
	}
	return s, e
}

func clone(k []string) []string { return append([]string(nil), k...) }

func lineIndent(data []byte, s int) string {
	e := s
	for e < len(data) && (data[e] == ' ' || data[e] == '\t') {
		e++
	}
	return string(data[s:e])
}
