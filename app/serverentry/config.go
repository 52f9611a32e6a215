package serverentry

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tailscale/hujson"

	"rootkeeper/app"
	"rootkeeper/app/secrets/spot"
)

// Config is what Parse found in a pasted or imported config.
type Config struct {
	// Servers are the entries Rootkeeper can run, sorted by name.
	Servers []app.Server
	// Skipped are the entries left out, in the order given, each with
	// the reason.
	Skipped []Skipped
}

// Skipped is an entry Parse left out, and why.
type Skipped struct {
	// Name is the entry's name in the config.
	Name string
	// Why says, for a person, why it was left out.
	Why string
}

// tables are where configs keep their servers, in the order they are
// looked for: Claude Desktop, Cursor, Claude Code, Windsurf, Gemini CLI…
// (mcpServers; Continue's is a list), VS Code (servers), Zed, Amp.
// Otherwise VS Code's settings.json ({"mcp": {"servers": …}}), opencode
// and Crush ({"mcp": …}), or the servers alone ({"name": {…}, …}).
var tables = []string{"mcpServers", "servers", "context_servers", "amp.mcpServers"}

// entryKeys are keys of a server entry: an object with one of them holding
// a value that is not an object is an entry, not a table of them.
var entryKeys = []string{"command", "cmd", "args", "url", "serverUrl", "httpUrl", "uri", "type"}

// Parse reads the MCP server definitions people paste from hosts' configs
// or import from a file, in any of their shapes: a whole config file (see
// tables), the servers alone, or one entry cut out of a file without its
// braces ("name": {…}). JSON with comments and trailing commas is fine. Each
// entry is read with Read in the Pasted dialect.
//
// An entry Rootkeeper would not run as written is skipped, with the
// reason: it is turned off, it already runs Rootkeeper's bridge, or it
// needs its host (Read's Skip; a variable in its environment, which
// Rootkeeper would store as written). A malformed entry is an error
// (*app.InputError) naming it; so is a config with no server entry at all.
func Parse(data []byte) (Config, error) {
	v, err := parseLeniently(data)
	if err != nil {
		return Config{}, inputErrorf("not an MCP server config: %v", err)
	}
	top, ok := v.Value.(*hujson.Object)
	if !ok {
		return Config{}, inputErrorf("not an MCP server config: the top level is %s, not an object", kindOf(v.Value))
	}
	table, where, err := findTable(top)
	if err != nil {
		return Config{}, err
	}
	c := collector{seen: map[string]bool{}}
	switch t := table.(type) {
	case *hujson.Object:
		for _, m := range t.Members {
			lit, _ := m.Name.Value.(hujson.Literal)
			if err := c.add(text(lit), m.Value.Value); err != nil {
				return Config{}, err
			}
		}
	case *hujson.Array:
		// Continue's list of servers that name themselves.
		for i, el := range t.Elements {
			obj, ok := el.Value.(*hujson.Object)
			if !ok {
				return Config{}, inputErrorf("%s[%d] is %s, not a server entry", where, i, kindOf(el.Value))
			}
			name, _ := membersOf(obj).get("name")
			lit, ok := name.(hujson.Literal)
			if !ok || lit.Kind() != '"' || text(lit) == "" {
				return Config{}, inputErrorf("%s[%d] has no name", where, i)
			}
			if err := c.add(text(lit), obj); err != nil {
				return Config{}, err
			}
		}
	}
	cfg := c.cfg
	if len(cfg.Servers)+len(cfg.Skipped) == 0 {
		return Config{}, errNoServers
	}
	slices.SortFunc(cfg.Servers, func(a, b app.Server) int { return strings.Compare(a.Name, b.Name) })
	return cfg, nil
}

// parseLeniently parses data as JSON with comments, as a person pastes
// it: a Windows editor's byte order mark is dropped, and text that does
// not parse is tried again as one entry cut out of a file without its
// braces, and with a line break after it (a line comment may end the
// text, where hujson wants a line break). The error is the first one.
func parseLeniently(data []byte) (hujson.Value, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	v, err := ParseJSONC(data)
	if err == nil {
		return v, nil
	}
	for _, try := range [][]string{{"", "\n"}, {"{", "}"}, {"{", "\n}"}} {
		if w, err2 := ParseJSONC(slices.Concat([]byte(try[0]), data, []byte(try[1]))); err2 == nil {
			return w, nil
		}
	}
	return v, err
}

// collector gathers a config's entries into cfg, each either a server or
// a skipped entry with the reason.
type collector struct {
	cfg  Config
	seen map[string]bool // names given so far
}

// add reads the entry called name. A name given twice or too long, or a
// malformed entry, is an error naming it; an entry Rootkeeper would not
// run as written (it runs the bridge already, it is turned off, it needs
// its host) is skipped, with the reason.
func (c *collector) add(name string, entry hujson.ValueTrimmed) error {
	if c.seen[name] {
		return inputErrorf("server %s is given twice", quote(name))
	}
	c.seen[name] = true
	if len(name) > 64 {
		return inputErrorf("server name %s is %d bytes long (at most 64)", quote(name), len(name))
	}
	e, err := readValue(name, entry, Pasted)
	if err != nil {
		var ie *app.InputError
		if errors.As(err, &ie) {
			return err
		}
		return inputErrorf("server %s: %v", quote(name), err)
	}
	why := e.Skip
	switch {
	case e.Bridges != "":
		why = fmt.Sprintf("it runs Rootkeeper's bridge for %s already", quote(e.Bridges))
	case e.Off:
		why = "it is turned off there (disabled)"
	case why == "":
		why = envVariable(e.Server)
	}
	if why != "" {
		c.cfg.Skipped = append(c.cfg.Skipped, Skipped{Name: name, Why: why})
		return nil
	}
	c.cfg.Servers = append(c.cfg.Servers, e.Server)
	return nil
}

// findTable finds the servers in a config: the value of the first of
// tables there, VS Code's mcp.servers, opencode's mcp, or the whole
// object. where names it for errors.
func findTable(top *hujson.Object) (hujson.ValueTrimmed, string, error) {
	m := membersOf(top)
	check := func(v hujson.ValueTrimmed, where string, list bool) (hujson.ValueTrimmed, string, error) {
		switch v.(type) {
		case *hujson.Object:
			return v, where, nil
		case *hujson.Array:
			if list {
				return v, where, nil
			}
		}
		return nil, where, inputErrorf("%q is %s, not an object of servers", where, kindOf(v))
	}
	for _, k := range tables {
		if v, ok := m.get(k); ok {
			return check(v, k, k == "mcpServers")
		}
	}
	if v, ok := m.get("mcp"); ok {
		if obj, ok := v.(*hujson.Object); ok {
			// VS Code's settings.json: {"mcp": {"servers": {…}}}; opencode
			// has its servers right under "mcp" (one may be called
			// "servers").
			if s, ok := membersOf(obj).get("servers"); ok && !isEntry(s) {
				return check(s, "mcp.servers", false)
			}
		}
		return check(v, "mcp", false)
	}
	if isEntry(top) {
		return nil, "", inputErrorf("this is one server's entry without its name: give it one, as \"NAME\": {…}")
	}
	if !slices.ContainsFunc(top.Members, func(m hujson.ObjectMember) bool { return m.Value.Value.Kind() == '{' }) {
		return nil, "", errNoServers
	}
	return top, "", nil
}

// isEntry reports whether v is a server entry rather than a table of
// them: it has a key of an entry holding something other than an object.
func isEntry(v hujson.ValueTrimmed) bool {
	obj, ok := v.(*hujson.Object)
	if !ok {
		return false
	}
	m := membersOf(obj)
	for _, k := range entryKeys {
		if v, ok := m.get(k); ok && v.Kind() != '{' {
			return true
		}
	}
	return false
}

// envVariable says which of srv's environment values uses a variable only
// a host expands, or "": Rootkeeper stores the environment of a server it
// imports and passes it on as written. (A host's file keeps its entries'
// environment, and the host expands it.)
func envVariable(srv app.Server) string {
	for _, k := range slices.Sorted(maps.Keys(srv.Env)) {
		if HasHostVariable(srv.Env[k]) {
			shown := spot.ShowEnv(srv.Name, srv.Env)
			return fmt.Sprintf("env %s (%s) uses a variable only the host expands: give the value itself", quote(k), quote(shown[k]))
		}
	}
	return ""
}

var errNoServers = inputErrorf("no servers found (expected an \"mcpServers\" or \"servers\" object)")

func inputErrorf(format string, args ...any) error {
	return &app.InputError{Msg: fmt.Sprintf(format, args...)}
}
