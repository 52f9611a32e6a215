package hosts

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlDoc is a TOML file (Codex's config.toml). Its meaning comes from
// go-toml's decoder; where each key's lines are, from go-toml's unstable
// parser, which reports byte ranges. Fields are edited as whole lines.
type tomlDoc struct {
	docBase
	lineDoc
	meta   map[string]any
	fields map[string][2]int // full dotted key -> line range
	tables map[string]int    // [table] header -> offset of its line
	order  [][]string        // keys in file order (tables and fields)
}

func parseTOML(path string, project string, data []byte) (*tomlDoc, error) {
	var meta map[string]any
	if err := toml.Unmarshal(data, &meta); err != nil {
		return nil, err
	}
	if meta == nil {
		meta = map[string]any{}
	}
	d := &tomlDoc{docBase: docBase{path, project}, meta: meta, fields: map[string][2]int{}, tables: map[string]int{}}
	p := unstable.Parser{}
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = nil
			it := n.Key()
			first := -1
			for it.Next() {
				k := it.Node()
				if first < 0 {
					first = int(k.Raw.Offset)
				}
				table = append(table, string(k.Data))
			}
			if n.Kind == unstable.ArrayTable {
				// Arrays of tables hold no servers; mark their keys
				// so nothing is edited inside them.
				table = append(table, "\x00")
			}
			s, _ := fullLines(data, first, first)
			d.tables[joinKey(table)] = s
			d.order = append(d.order, table)
		case unstable.KeyValue:
			key := clone(table)
			it := n.Key()
			for it.Next() {
				key = append(key, string(it.Node().Data))
			}
			s, e := fullLines(data, int(n.Raw.Offset), int(n.Raw.Offset+n.Raw.Length))
			d.fields[joinKey(key)] = [2]int{s, e}
			d.order = append(d.order, key)
		}
	}
	if err := p.Error(); err != nil {
		return nil, err
	}
	d.bind(data)
	return d, nil
}

// bind points the line editor at d (again after each re-parse, which
// replaces d's contents).
func (d *tomlDoc) bind(data []byte) {
	d.lineDoc = lineDoc{
		data:       data,
		sep:        " = ",
		keyText:    tomlKey,
		fieldNames: d.fieldNames,
		span: func(key []string) (int, int, bool) {
			r, ok := d.fields[joinKey(key)]
			return r[0], r[1], ok
		},
		container: d.container,
		reparse: func(b []byte) error {
			nd, err := parseTOML(d.file, d.project, b)
			if err != nil {
				return err
			}
			*d = *nd
			d.bind(b)
			return nil
		},
	}
}

func joinKey(k []string) string { return strings.Join(k, "\x00") }

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func tomlKey(name string) string {
	if bareKey.MatchString(name) {
		return name
	}
	return strconv.Quote(name)
}

func (d *tomlDoc) value(key []string) (any, bool) { return dig(d.meta, key) }

// keys lists the names directly under key, in the order they first appear.
func (d *tomlDoc) keys(key []string) []string {
	var out []string
	for _, k := range d.order {
		if len(k) > len(key) && slices.Equal(k[:len(key)], key) && k[len(key)] != "\x00" && !slices.Contains(out, k[len(key)]) {
			out = append(out, k[len(key)])
		}
	}
	return out
}

func (d *tomlDoc) fieldNames(key []string) []string {
	var out []string
	for _, k := range d.order {
		if len(k) == len(key)+1 && slices.Equal(k[:len(key)], key) {
			if _, ok := d.fields[joinKey(k)]; ok {
				out = append(out, k[len(key)])
			}
		}
	}
	return out
}

// container: new lines go into a [table] of the file's own; a server
// written as an inline table or dotted keys is left to a person.
func (d *tomlDoc) container(key []string) (string, bool, string) {
	if _, ok := d.tables[joinKey(key)]; !ok {
		return "", false, "not a [" + strings.Join(key, ".") + "] table (inline tables and dotted keys are left as they are)"
	}
	names := d.fieldNames(key)
	if len(names) == 0 {
		return "", false, "the table is empty"
	}
	r := d.fields[joinKey(append(clone(key), names[0]))]
	return lineIndent(d.data, r[0]), true, ""
}
