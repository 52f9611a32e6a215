package hosts

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// yamlDoc is a YAML file (Goose's config.yaml). Its meaning and positions
// come from yaml.v3's node tree; fields are edited as whole lines, since
// re-encoding the tree would re-indent what Goose wrote (its sequences sit
// at their key's column).
type yamlDoc struct {
	docBase
	lineDoc
	meta map[string]any
	root *yaml.Node // the top-level mapping (nil for an empty file)
}

func parseYAML(path string, project string, data []byte) (*yamlDoc, error) {
	var meta map[string]any
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return nil, err
	}
	if meta == nil {
		meta = map[string]any{}
	}
	var top yaml.Node
	if err := yaml.Unmarshal(data, &top); err != nil {
		return nil, err
	}
	d := &yamlDoc{docBase: docBase{path, project}, meta: meta}
	if len(top.Content) > 0 {
		if top.Content[0].Kind != yaml.MappingNode {
			return nil, errors.New("the top level is not a mapping")
		}
		d.root = top.Content[0]
	}
	d.bind(data)
	return d, nil
}

// bind points the line editor at d (again after each re-parse, which
// replaces d's contents).
func (d *yamlDoc) bind(data []byte) {
	d.lineDoc = lineDoc{
		data:       data,
		sep:        ": ",
		keyText:    yamlKey,
		fieldNames: d.keys,
		span:       d.span,
		container:  d.container,
		reparse: func(b []byte) error {
			nd, err := parseYAML(d.file, d.project, b)
			if err != nil {
				return err
			}
			*d = *nd
			d.bind(b)
			return nil
		},
	}
}

func yamlKey(name string) string {
	if bareKey.MatchString(name) {
		return name
	}
	q, _ := renderJSON(name)
	return string(q)
}

func (d *yamlDoc) value(key []string) (any, bool) { return dig(d.meta, key) }

// node finds the mapping entry at key: its key node and value node.
func (d *yamlDoc) node(key []string) (k, v *yaml.Node) {
	cur := d.root
	for _, name := range key {
		if cur != nil && cur.Kind == yaml.SequenceNode {
			// A list of servers (Continue's mcpServers): items by index.
			i, err := strconv.Atoi(name)
			if err != nil || i < 0 || i >= len(cur.Content) || strconv.Itoa(i) != name {
				return nil, nil
			}
			k, cur = nil, cur.Content[i]
			continue
		}
		if cur == nil || cur.Kind != yaml.MappingNode {
			return nil, nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(cur.Content); i += 2 {
			if cur.Content[i].Value == name {
				k, next = cur.Content[i], cur.Content[i+1]
			}
		}
		if next == nil {
			return nil, nil
		}
		cur = next
	}
	return k, cur
}

func (d *yamlDoc) mapping(key []string) *yaml.Node {
	if len(key) == 0 {
		return d.root
	}
	_, v := d.node(key)
	if v != nil && v.Kind == yaml.AliasNode {
		return nil
	}
	return v
}

func (d *yamlDoc) keys(key []string) []string {
	m := d.mapping(key)
	if m != nil && m.Kind == yaml.SequenceNode {
		out := make([]string, len(m.Content))
		for i := range m.Content {
			out[i] = strconv.Itoa(i)
		}
		return out
	}
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var out []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !slices.Contains(out, m.Content[i].Value) {
			out = append(out, m.Content[i].Value)
		}
	}
	return out
}

// lineStarts indexes the start of each line (1-based lines).
func lineStarts(data []byte) []int {
	starts := []int{0, 0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// span is the field's lines: its key's line, then every following line
// indented deeper than the key (or, for a block sequence, "- " items at the
// key's column), stopping at a blank line or anything else.
func (d *yamlDoc) span(key []string) (int, int, bool) {
	if len(key) == 0 {
		return 0, 0, false
	}
	parent := d.mapping(key[:len(key)-1])
	if parent == nil || parent.Kind != yaml.MappingNode || parent.Style&yaml.FlowStyle != 0 {
		return 0, 0, false
	}
	k, v := d.node(key)
	if k == nil {
		return 0, 0, false
	}
	starts := lineStarts(d.data)
	if k.Line >= len(starts) {
		return 0, 0, false
	}
	col := k.Column - 1
	s := starts[k.Line]
	_, e := fullLines(d.data, s, s)
	if s+col <= len(d.data) && len(bytes.Trim(d.data[s:s+col], " ")) > 0 {
		// The first key of a list item ("  - command: x"): the field
		// starts at its key; the "- " before it stays.
		s += col
	}
	seq := v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0
	for e < len(d.data) {
		_, next := fullLines(d.data, e, e)
		line := d.data[e:next]
		trimmed := bytes.TrimLeft(line, " ")
		ind := len(line) - len(trimmed)
		if len(bytes.TrimSpace(line)) == 0 {
			break
		}
		if ind > col || seq && ind == col && (bytes.HasPrefix(trimmed, []byte("- ")) || bytes.Equal(bytes.TrimSpace(trimmed), []byte("-"))) {
			e = next
			continue
		}
		break
	}
	return s, e, true
}

func (d *yamlDoc) container(key []string) (string, bool, string) {
	m := d.mapping(key)
	switch {
	case m == nil || m.Kind != yaml.MappingNode:
		return "", false, "not a mapping"
	case m.Style&yaml.FlowStyle != 0:
		return "", false, "written in flow style {…}, left as it is"
	case len(m.Content) == 0:
		return "", false, "the mapping is empty"
	}
	return strings.Repeat(" ", m.Content[0].Column-1), true, ""
}
