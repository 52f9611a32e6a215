package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// EncodeState renders st as the state file's JSON, indented, ending in a
// newline: json.MarshalIndent's bytes (TestEncodeStateAsMarshalIndent,
// FuzzEncodeState).
func EncodeState(st State) ([]byte, error) { return (*stateEncoder)(nil).encode(st) }

// stateEncoder encodes states as EncodeState, remembering the servers it
// encoded last: a store's saves (Store.update hands over the very list it
// saved before when a change left the servers as they were). Its decisions
// are encoded by appending, without reflection; the rest by json.Marshal,
// then indented by appendIndented. A grant to fifty servers encoded
// fifty unchanged servers and a hundred decisions by reflection at each
// save.
type stateEncoder struct {
	servers []Server // the list last encoded, never changed (a saved state's)
	block   []byte   // its encoding
	compact []byte   // the last compact encoding's room, for the next
	grown   float64  // how much longer than its compact encoding the last state was indented
}

// encode is EncodeState; a nil encoder remembers nothing.
func (c *stateEncoder) encode(st State) ([]byte, error) {
	data, err := c.compactOf(st)
	if err != nil {
		return nil, fmt.Errorf("encoding state: %w", err)
	}
	grown := 1.5
	if c != nil && c.grown > 1 {
		grown = c.grown + 0.1
	}
	out := appendIndented(make([]byte, 0, int(grown*float64(len(data)))+1), data, "  ")
	out = append(out, '\n')
	if c != nil {
		c.compact, c.grown = data[:0], float64(len(out))/float64(max(len(data), 1))
	}
	return out, nil
}

// compactOf is st as json.Marshal writes it: its roots, servers and
// decisions encoded apart, the rest by json.Marshal with those three left
// out (null) and cut from its start. Should anything not go as planned
// (a field before those three, a time json.Marshal refuses), the whole
// state goes through json.Marshal, errors included.
func (c *stateEncoder) compactOf(st State) ([]byte, error) {
	rest := st
	rest.Roots, rest.Servers, rest.Decisions = nil, nil, nil
	tail, err := json.Marshal(rest)
	head := `{"version":` + strconv.Itoa(st.Version) + `,"roots":null,"servers":null,"decisions":null`
	if err != nil || !bytes.HasPrefix(tail, []byte(head)) {
		return json.Marshal(st)
	}
	roots, err := json.Marshal(st.Roots)
	if err != nil {
		return json.Marshal(st)
	}
	var b []byte
	if c != nil && c.compact != nil {
		b = c.compact[:0] // grown as needed, and kept
	} else {
		b = make([]byte, 0, len(tail)+len(roots)+400*len(st.Servers)+160*len(st.Decisions))
	}
	b = append(strconv.AppendInt(append(b, `{"version":`...), int64(st.Version), 10), `,"roots":`...)
	b = append(append(b, roots...), `,"servers":`...)
	if b, err = c.appendServers(b, st.Servers); err != nil {
		return json.Marshal(st)
	}
	b = append(b, `,"decisions":`...)
	if b, err = appendDecisions(b, st.Decisions); err != nil {
		return json.Marshal(st)
	}
	return append(b, tail[len(head):]...), nil
}

// appendServers appends servers as json.Marshal writes them: the encoding
// remembered when they are the list encoded last (the same list, not an
// equal one: a saved state's lists are never changed).
func (c *stateEncoder) appendServers(b []byte, servers []Server) ([]byte, error) {
	if c != nil && c.block != nil && len(servers) == len(c.servers) && (servers == nil) == (c.servers == nil) &&
		(len(servers) == 0 || &servers[0] == &c.servers[0]) {
		return append(b, c.block...), nil
	}
	block, err := json.Marshal(servers)
	if err != nil {
		return b, err
	}
	if c != nil {
		c.servers, c.block = servers, block
	}
	return append(b, block...), nil
}

// appendDecisions appends ds as json.Marshal writes them.
func appendDecisions(b []byte, ds []Decision) ([]byte, error) {
	if ds == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i := range ds {
		if i > 0 {
			b = append(b, ',')
		}
		d := &ds[i]
		b = appendString(append(b, `{"server":`...), d.Server)
		b = appendString(append(b, `,"root":`...), d.Root)
		b = appendString(append(b, `,"verdict":`...), string(d.Verdict))
		b = appendString(append(b, `,"scope":`...), string(d.Scope))
		at, err := d.At.AppendText(append(b, `,"at":"`...))
		if err != nil {
			return b, err
		}
		b = appendString(append(at, `","by":`...), string(d.By))
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// appendString appends s quoted as json.Marshal writes it: as it is when it
// is printable ASCII without a quote, a backslash or a character escaped
// for HTML, through json.Marshal otherwise.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}
