package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ParseServerConfig reads the MCP server definitions people paste from other
// hosts, in any of their shapes:
//
//   - {"mcpServers": {...}}           Claude Desktop, Cursor, Claude Code (.mcp.json), Windsurf
//   - {"servers": {...}}              VS Code (.vscode/mcp.json)
//   - {"mcp": {"servers": {...}}}     VS Code settings.json
//   - {"name": {"command": ...}, ...} the inner map alone
//   - "name": {"command": ...}        one entry cut out of a file, without braces
//
// Comments (// and /* */) and trailing commas, which VS Code allows, are
// accepted. Entries with "disabled": true are skipped. Servers come back
// sorted by name and validated; the first bad entry is an error naming it.
func ParseServerConfig(data []byte) ([]Server, error) {
	// A byte order mark, first in files Windows editors write, is not JSON.
	clean := stripJSONC(bytes.TrimPrefix(data, []byte("\ufeff")))
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(clean, &doc); err != nil {
		wrapped := append(append([]byte("{"), clean...), '}')
		if err2 := json.Unmarshal(wrapped, &doc); err2 != nil {
			return nil, inputErrorf("not an MCP server config: %v", jsonErrorWithLine(data, err))
		}
	}
	entries := doc
	for _, path := range [][]string{{"mcpServers"}, {"servers"}, {"mcp", "servers"}} {
		if inner, ok := dig(doc, path); ok {
			entries = inner
			break
		}
	}
	if len(entries) == 0 {
		return nil, inputErrorf("no servers found (expected an \"mcpServers\" or \"servers\" object)")
	}
	var out []Server
	for name, raw := range entries {
		srv, skip, err := parseServerEntry(name, raw)
		if err != nil {
			return nil, err
		}
		if !skip {
			out = append(out, srv)
		}
	}
	slices.SortFunc(out, func(a, b Server) int { return compareStrings(a.Name, b.Name) })
	return out, nil
}

func dig(doc map[string]json.RawMessage, path []string) (map[string]json.RawMessage, bool) {
	cur := doc
	for _, key := range path {
		raw, ok := cur[key]
		if !ok {
			return nil, false
		}
		var next map[string]json.RawMessage
		if err := json.Unmarshal(raw, &next); err != nil {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

type configEntry struct {
	Type      string            `json:"type"`
	Transport string            `json:"transport"`
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	Cwd       string            `json:"cwd"`
	URL       string            `json:"url"`
	ServerURL string            `json:"serverUrl"`
	Headers   map[string]string `json:"headers"`
	Disabled  bool              `json:"disabled"`
	RootsMode RootsMode         `json:"rootsMode"`
}

func parseServerEntry(name string, raw json.RawMessage) (Server, bool, error) {
	var e configEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return Server{}, false, inputErrorf("server %q: %v", name, err)
	}
	if e.Disabled {
		return Server{}, true, nil
	}
	srv := Server{
		Name: name, Command: e.Command, Args: e.Args, Env: e.Env, Cwd: e.Cwd,
		URL: e.URL, Headers: e.Headers, RootsMode: e.RootsMode,
	}
	if srv.URL == "" {
		srv.URL = e.ServerURL
	}
	typ := strings.ToLower(e.Type)
	if typ == "" {
		typ = strings.ToLower(e.Transport)
	}
	switch typ {
	case "", "stdio":
		if srv.Command == "" && srv.URL != "" {
			typ = TransportHTTP
		} else {
			typ = TransportStdio
		}
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		typ = TransportHTTP
	case "sse":
		typ = TransportSSE
	default:
		return Server{}, false, inputErrorf("server %q: unknown type %q (want stdio, http or sse)", name, e.Type)
	}
	srv.Type = typ
	if err := ValidateServer(srv); err != nil {
		return Server{}, false, err
	}
	return srv, false, nil
}

// stripJSONC removes comments and trailing commas outside strings.
func stripJSONC(data []byte) []byte {
	var out bytes.Buffer
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			out.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
			out.WriteByte(c)
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			out.WriteByte('\n')
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			end := bytes.Index(data[i+2:], []byte("*/"))
			if end < 0 {
				i = len(data)
			} else {
				i += end + 3
			}
			out.WriteByte(' ')
		case c == ',':
			j := i + 1
			for j < len(data) && strings.ContainsRune(" \t\r\n", rune(data[j])) {
				j++
			}
			if j < len(data) && (data[j] == '}' || data[j] == ']') {
				continue
			}
			out.WriteByte(c)
		default:
			out.WriteByte(c)
		}
	}
	return bytes.TrimSpace(out.Bytes())
}

// jsonErrorWithLine adds the line number to a JSON syntax error.
func jsonErrorWithLine(data []byte, err error) error {
	if se, ok := err.(*json.SyntaxError); ok {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Errorf("line %d: %v", line, err)
	}
	return err
}
