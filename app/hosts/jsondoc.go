package hosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"

	"rootkeeper/app/serverentry"
)

// jsonDoc is a JSON or JSONC file, edited through hujson's exact syntax
// tree: comments, trailing commas, key order and whitespace of everything
// not edited come back byte for byte.
//
// The tree holds slices of the file's bytes, not copies: a ~/.claude.json
// of 257 MiB (mostly prompt history) parses into 27 MiB more. Only the
// fields asked for (value) are decoded; decoding the whole file into maps
// took five times its size.
type jsonDoc struct {
	docBase
	root hujson.Value
	data []byte
	// dirtyData: root was edited since data was made from it. It is made
	// again when asked for, not after each edit: a big ~/.claude.json
	// takes a while to write out.
	dirtyData bool
	// names indexes the member names of the objects searched since the
	// last edit (see memberIndex).
	names map[*hujson.Object]map[string]int
}

func parseJSON(path string, project string, data []byte) (*jsonDoc, error) {
	root, err := serverentry.ParseJSONC(data)
	if err != nil {
		return nil, err
	}
	if _, ok := root.Value.(*hujson.Object); !ok {
		return nil, errors.New("the top level is not an object")
	}
	return &jsonDoc{docBase: docBase{path, project}, root: root, data: data}, nil
}

// value decodes the field at key, in its standard JSON form: the last
// member of each name (as encoding/json reads duplicates), an array's
// elements by their index.
func (d *jsonDoc) value(key []string) (any, bool) {
	v := d.node(key)
	if v == nil {
		return nil, false
	}
	std := hujson.Value{Value: v.Value}.Clone()
	std.Standardize()
	var out any
	if json.Unmarshal(std.Pack(), &out) != nil {
		return nil, false
	}
	return out, true
}

// raw is the field at key as written (comments, and every member of a
// name given twice, kept).
func (d *jsonDoc) raw(key []string) ([]byte, bool) {
	v := d.node(key)
	if v == nil {
		return nil, false
	}
	return hujson.Value{Value: v.Value}.Pack(), true
}

// node finds the field at key: the last member of each name, an array's
// elements by their index.
func (d *jsonDoc) node(key []string) *hujson.Value {
	v := &d.root
	for _, k := range key {
		switch c := v.Value.(type) {
		case *hujson.Object:
			i := d.memberIndex(c, k)
			if i < 0 {
				return nil
			}
			v = &c.Members[i].Value
		case *hujson.Array:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(c.Elements) || strconv.Itoa(i) != k {
				return nil
			}
			v = &c.Elements[i]
		default:
			return nil
		}
	}
	return v
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
		i := d.memberIndex(obj, k)
		if i < 0 {
			return nil
		}
		v = &obj.Members[i].Value
	}
	obj, _ := v.Value.(*hujson.Object)
	return obj
}

// memberIndex is the index of the last member of obj called name, or -1.
// An object's names are indexed the first time it is searched and
// forgotten at the next edit: each entry of a table is looked up, and a
// scan of the table for each took time in the square of its size (a
// project's .mcp.json of 5000 servers, 126 KB, took a minute to list).
func (d *jsonDoc) memberIndex(obj *hujson.Object, name string) int {
	idx, ok := d.names[obj]
	if !ok {
		idx = make(map[string]int, len(obj.Members))
		for i, m := range obj.Members {
			if lit, ok := m.Name.Value.(hujson.Literal); ok {
				idx[lit.String()] = i
			}
		}
		if d.names == nil {
			d.names = map[*hujson.Object]map[string]int{}
		}
		d.names[obj] = idx
	}
	if i, ok := idx[name]; ok {
		return i
	}
	return -1
}

func (d *jsonDoc) keys(key []string) []string {
	obj := d.find(key)
	if obj == nil {
		return nil
	}
	var out []string
	seen := make(map[string]bool, len(obj.Members))
	for _, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && !seen[lit.String()] {
			seen[lit.String()] = true
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
	i := d.memberIndex(obj, key[len(key)-1])
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
	if i := d.memberIndex(obj, name); i >= 0 {
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
	at := d.memberIndex(obj, after)
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
	i := d.memberIndex(obj, key[len(key)-1])
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
	d.dirtyData, d.names = true, nil
	return nil
}
