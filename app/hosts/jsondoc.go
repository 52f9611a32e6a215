package hosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// jsonDoc is a JSON or JSONC file, edited through hujson's exact syntax
// tree: comments, trailing commas, key order and whitespace of everything
// not edited come back byte for byte.
type jsonDoc struct {
	docBase
	root hujson.Value
	data []byte
	meta map[string]any
	// dirtyData, dirtyMeta: root was edited since data (meta) were made
	// from it. They are made again when asked for, not after each edit: a
	// big ~/.claude.json takes a while to write out and decode.
	dirtyData, dirtyMeta bool
}

func parseJSON(path string, project string, data []byte) (*jsonDoc, error) {
	root, err := hujson.Parse(data)
	if err != nil {
		return nil, err
	}
	if _, ok := root.Value.(*hujson.Object); !ok {
		return nil, errors.New("the top level is not an object")
	}
	std := root.Clone()
	std.Standardize()
	var meta map[string]any
	if err := json.Unmarshal(std.Pack(), &meta); err != nil {
		return nil, err
	}
	return &jsonDoc{docBase: docBase{path, project}, root: root, data: data, meta: meta}, nil
}

func (d *jsonDoc) tree() map[string]any {
	if d.dirtyMeta {
		d.dirtyMeta = false
		std := d.root.Clone()
		std.Standardize()
		var meta map[string]any
		// Only values hujson parsed are put into the tree, and their
		// standard form decodes; were it not to, the meaning before the
		// edit is the safer answer.
		if json.Unmarshal(std.Pack(), &meta) == nil {
			d.meta = meta
		}
	}
	return d.meta
}

func (d *jsonDoc) bytes() []byte {
	if d.dirtyData {
		d.dirtyData = false
		d.data = d.root.Pack()
	}
	return d.data
}

// find returns the object at key (the last member of each name, as
// encoding/json reads duplicates).
func (d *jsonDoc) find(key []string) *hujson.Object {
	v := &d.root
	for _, k := range key {
		obj, ok := v.Value.(*hujson.Object)
		if !ok {
			return nil
		}
		i := memberIndex(obj, k)
		if i < 0 {
			return nil
		}
		v = &obj.Members[i].Value
	}
	obj, _ := v.Value.(*hujson.Object)
	return obj
}

func memberIndex(obj *hujson.Object, name string) int {
	at := -1
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			at = i
		}
	}
	return at
}

func (d *jsonDoc) keys(key []string) []string {
	obj := d.find(key)
	if obj == nil {
		return nil
	}
	var out []string
	for _, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && !slices.Contains(out, lit.String()) {
			out = append(out, lit.String())
		}
	}
	return out
}

func (d *jsonDoc) get(key []string) ([]byte, bool) {
	obj := d.find(key[:len(key)-1])
	if obj == nil {
		return nil, false
	}
	i := memberIndex(obj, key[len(key)-1])
	if i < 0 {
		return nil, false
	}
	return hujson.Value{Value: obj.Members[i].Value.Value}.Pack(), true
}

func (d *jsonDoc) render(_ []string, v any) ([]byte, error) { return renderJSON(v) }

// renderJSON writes a value on one line, readable: `["a", "b"]`,
// `{"K": "v"}`.
func renderJSON(v any) ([]byte, error) {
	quote := func(s string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		return strings.TrimSuffix(b.String(), "\n")
	}
	switch v := v.(type) {
	case string:
		return []byte(quote(v)), nil
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = quote(s)
		}
		return []byte("[" + strings.Join(q, ", ") + "]"), nil
	case map[string]string:
		var q []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			q = append(q, quote(k)+": "+quote(v[k]))
		}
		return []byte("{" + strings.Join(q, ", ") + "}"), nil
	}
	return nil, fmt.Errorf("cannot render %T", v)
}

func (d *jsonDoc) put(key []string, after string, raw []byte) error {
	val, err := hujson.Parse(raw)
	if err != nil {
		return fmt.Errorf("value for %q: %w", strings.Join(key, "."), err)
	}
	obj := d.find(key[:len(key)-1])
	if obj == nil {
		return fmt.Errorf("no object at %q", strings.Join(key[:len(key)-1], "."))
	}
	name := key[len(key)-1]
	if i := memberIndex(obj, name); i >= 0 {
		obj.Members[i].Value.Value = val.Value
		return d.repack()
	}
	m := hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: hujson.Extra(" "), Value: hujson.String(name)},
		Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: val.Value},
	}
	if after == atStart && len(obj.Members) > 0 {
		first := obj.Members[0]
		m.Name.BeforeExtra = leadingSpace(first.Name.BeforeExtra)
		m.Value.BeforeExtra = slices.Clone(first.Value.BeforeExtra)
		obj.Members = slices.Insert(obj.Members, 0, m)
		return d.repack()
	}
	at := memberIndex(obj, after)
	if at < 0 {
		at = len(obj.Members) - 1
	}
	if at >= 0 {
		prev := &obj.Members[at]
		// The new member is laid out like the one it follows (its
		// indentation), and takes over its trailing comma, if any.
		m.Name.BeforeExtra = leadingSpace(prev.Name.BeforeExtra)
		m.Value.BeforeExtra = slices.Clone(prev.Value.BeforeExtra)
		if at == len(obj.Members)-1 {
			m.Value.AfterExtra, prev.Value.AfterExtra = prev.Value.AfterExtra, nil
		}
	}
	obj.Members = slices.Insert(obj.Members, at+1, m)
	return d.repack()
}

// leadingSpace keeps the last line break and indentation of extra, without
// its comments (which belong to the member they were written above).
func leadingSpace(extra hujson.Extra) hujson.Extra {
	s := string(extra)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		rest := s[i:]
		if strings.Trim(rest, " \t\r\n") == "" {
			return hujson.Extra(rest)
		}
	}
	return hujson.Extra(" ")
}

func (d *jsonDoc) del(key []string) error {
	obj := d.find(key[:len(key)-1])
	if obj == nil {
		return nil
	}
	i := memberIndex(obj, key[len(key)-1])
	if i < 0 {
		return nil
	}
	last := i == len(obj.Members)-1
	trailing := obj.Members[i].Value.AfterExtra
	obj.Members = slices.Delete(obj.Members, i, i+1)
	if last && len(obj.Members) > 0 {
		obj.Members[len(obj.Members)-1].Value.AfterExtra = trailing
	}
	return d.repack()
}

// repack notes an edit of the tree (see dirty).
func (d *jsonDoc) repack() error {
	d.dirtyData, d.dirtyMeta = true, true
	return nil
}
