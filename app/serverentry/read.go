package serverentry

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tailscale/hujson"

	"rootkeeper/app"
	"rootkeeper/app/secrets/spot"
)

// MaxString is the longest command, argument, environment value, URL or
// header an entry may hold: what Linux lets one argument or environment
// string of a program be (MAX_ARG_STRLEN, 32 pages), so nothing longer
// could run anyway. It keeps errors, which name the value, short.
const MaxString = 128 << 10

// Entry is what Read makes of one server entry.
type Entry struct {
	// Server is what the entry runs, named as Read was asked. Its Env is
	// the entry's environment (a host keeps it in its own file).
	Server app.Server
	// Skip says why Rootkeeper cannot run the entry as written ("" when it
	// can): the host does something for it that Rootkeeper cannot do in
	// its place, or it is no server. Server holds what was read of it.
	Skip string
	// Off: the entry is turned off where it was written (disabled: true,
	// enabled: false).
	Off bool
	// Bridges is the Rootkeeper server the entry runs `rootkeeper bridge`
	// for ("" when it runs something else): a protected entry.
	Bridges string
	// Under is the key the entry's program sits under: "" but for Zed's
	// older {"command": {path, args, env}}, where it is "command".
	Under string
	// Dialect is where the entry's fields are: the dialect Read was given,
	// fitted to the entry (the keys under Under, the keys a paste uses).
	Dialect Dialect
}

// Read makes sense of one server entry: raw is its JSON (comments and
// trailing commas allowed), name the server's name in Rootkeeper, d the
// dialect of the file it comes from (Pasted when none).
//
// An error says the entry is malformed (a value of the wrong kind, a key
// spelled twice or in another case, a value too long, no command nor URL,
// or a server ValidateServer refuses); Entry then holds what was read. A
// well-formed entry that Rootkeeper cannot run as written comes back with
// Skip set.
func Read(name string, raw []byte, d Dialect) (Entry, error) {
	v, err := ParseJSONC(raw)
	if err != nil {
		return Entry{Dialect: d}, err
	}
	return readValue(name, v.Value, d)
}

// readValue reads an entry already parsed. The order of its steps is the
// order of the errors a person meets: the entry's transport, its program,
// its URL, what surrounds the program (environment, folder) or the remote
// server (headers), then whether Rootkeeper can run it at all.
func readValue(name string, v hujson.ValueTrimmed, d Dialect) (Entry, error) {
	obj, ok := v.(*hujson.Object)
	if !ok {
		return Entry{Dialect: d}, errors.New("not an object")
	}
	o := membersOf(obj)
	top := reader{o: o}
	if d.fit {
		var err error
		if d, err = fit(o, d); err != nil {
			return Entry{Dialect: d}, err
		}
	}
	e := Entry{Dialect: d, Server: app.Server{Name: name}}
	if err := o.ambiguous(readKeys(d)); err != nil {
		return e, err
	}
	typ, skip, err := top.transport(d)
	if err != nil || skip != "" {
		e.Skip = skip
		return e, err
	}
	// top reads the entry's own keys; prog, the program's, which Zed's
	// older shape puts under "command".
	prog, pd, err := readProgram(&e, top, d)
	if err != nil {
		return e, err
	}
	srv := &e.Server
	if err := readURL(srv, prog, pd, typ); err != nil {
		return e, err
	}
	if err := readSurroundings(srv, prog, pd); err != nil {
		return e, err
	}
	if d.Own {
		mode, err := top.field("rootsMode")
		if err != nil {
			return e, err
		}
		srv.RootsMode = app.RootsMode(mode)
	}
	e.Off = top.is("disabled", 't') || top.is("enabled", 'f')
	return e, settle(&e, top, d)
}

// transport is the transport the entry names in dialect d ("" when none),
// or, when it names one Rootkeeper cannot start, why the entry is skipped.
func (r reader) transport(d Dialect) (typ, skip string, err error) {
	if d.Type == "" {
		// A host without a type key reads none; one written anyway is
		// taken in its common meaning.
		if t, ok := r.o.get("type"); ok {
			if lit, ok := t.(hujson.Literal); ok && lit.Kind() == '"' {
				typ = CommonTypes[strings.ToLower(lit.String())]
			}
		}
		return typ, "", nil
	}
	t, ok := r.o.get(d.Type)
	if !ok {
		return "", "", nil
	}
	s, err := r.str(d.Type, t)
	if err != nil {
		return "", "", err
	}
	typ, known := d.Types[strings.ToLower(s)]
	if !known {
		return "", fmt.Sprintf("%s %s is not a server Rootkeeper can start (stdio, http or sse)", d.Type, quote(s)), nil
	}
	return typ, "", nil
}

// readProgram reads the program the entry runs, its command and
// arguments, into e.Server. The command is a string, an array of the
// program and its arguments where d allows one, or (Zed's older shape) an
// object holding the program's fields: then e.Under and e.Dialect say so,
// and the reader and dialect returned are that object's, to read the rest
// of the program's fields (environment, folder) from.
func readProgram(e *Entry, r reader, d Dialect) (reader, Dialect, error) {
	srv := &e.Server
	var fromArray []string
	switch c, _ := r.o.get(d.Command); c := c.(type) {
	case *hujson.Array:
		if !d.CommandArray {
			return r, d, fmt.Errorf("%q is an array, not a string", d.Command)
		}
		list, err := r.list(d.Command, c)
		if err != nil {
			return r, d, err
		}
		if len(list) > 0 {
			srv.Command, fromArray = list[0], list[1:]
		}
		if _, ok := r.o.get(d.Args); ok && d.Args != "" {
			return r, d, fmt.Errorf("%q is an array of the program and its arguments, and %q is given too", d.Command, d.Args)
		}
	case *hujson.Object:
		if !d.LegacyCommand {
			return r, d, fmt.Errorf("%q is an object, not a string", d.Command)
		}
		// Zed's older shape: the program's fields under "command".
		e.Under = d.Command
		d = Dialect{Command: "path", Args: "args", Env: "env", Types: d.Types}
		e.Dialect = d
		r = reader{o: membersOf(c), under: e.Under + "."}
		if err := r.o.ambiguous(readKeys(d)); err != nil {
			return r, d, err
		}
		var err error
		if srv.Command, err = r.field(d.Command); err != nil {
			return r, d, err
		}
	case nil:
	default:
		var err error
		if srv.Command, err = r.str(d.Command, c); err != nil {
			return r, d, err
		}
	}
	if d.Args != "" {
		if a, ok := r.o.get(d.Args); ok {
			list, err := r.list(d.Args, a)
			if err != nil {
				return r, d, err
			}
			srv.Args = list
		}
	}
	if fromArray != nil {
		srv.Args = fromArray
	}
	if len(srv.Args) == 0 {
		srv.Args = nil
	}
	return r, d, nil
}

// readURL reads the entry's URL, the first of d's URL keys that holds
// one, and settles srv's transport: stdio for a program; for a remote
// server the transport the entry named (typ), else the one its URL key
// implies, else HTTP. An entry with neither a command nor a URL is an
// error.
func readURL(srv *app.Server, r reader, d Dialect, typ string) error {
	var at URLKey
	for _, u := range d.URLs {
		s, err := r.field(u.Key)
		if err != nil {
			return err
		}
		if s != "" && srv.URL == "" {
			srv.URL, at = s, u
		}
	}
	switch {
	case srv.Command != "":
		srv.Type = app.TransportStdio
	case srv.URL != "":
		if typ == "" || typ == app.TransportStdio {
			typ = at.Transport
		}
		if typ == "" {
			typ = app.TransportHTTP
		}
		srv.Type = typ
	default:
		return errors.New("neither a command nor a url")
	}
	return nil
}

// readSurroundings reads what surrounds the server: a program's
// environment and folder, a remote server's headers.
func readSurroundings(srv *app.Server, r reader, d Dialect) error {
	var err error
	if srv.Type == app.TransportStdio {
		if srv.Env, err = r.strMap(d.Env, false); err != nil {
			return err
		}
		srv.Cwd, err = r.field(d.Cwd)
		return err
	}
	srv.Headers, err = r.strMap(d.Headers, true)
	return err
}

// settle says whether Rootkeeper can run the entry read into e as
// written: it sets e.Bridges for an entry that runs Rootkeeper's bridge
// (a protected one), e.Skip for one that needs its host (a key the host
// acts on, a variable only the host expands), and otherwise returns what
// ValidateServer says of the server. top reads the entry's own keys in
// dialect d.
func settle(e *Entry, top reader, d Dialect) error {
	srv := e.Server
	if isRootkeeper(srv.Command) && isBridge(srv.Args) {
		e.Bridges = srv.Args[len(srv.Args)-1]
		return nil
	}
	for _, k := range d.HostOnly {
		if v, ok := top.o.get(k); ok && !isFalse(v) {
			e.Skip = fmt.Sprintf("%q is for the host to act on (a sign-in, a token from its environment), which Rootkeeper cannot do in its place", k)
			return nil
		}
	}
	if e.Skip = hostVariable(srv); e.Skip != "" {
		return nil
	}
	return app.ValidateServer(srv)
}

// hostVariable says which value of srv's command, arguments, cwd, URL or
// headers uses a variable only a host expands, or "". Rootkeeper runs the
// server as it stores it, so the variable would reach the server as
// written. What is quoted is shown as `hosts list` shows it: its secrets
// hidden.
func hostVariable(srv app.Server) string {
	names := slices.Sorted(maps.Keys(srv.Headers))
	raw := append([]string{srv.Command, srv.Cwd, srv.URL}, srv.Args...)
	for _, n := range names {
		raw = append(raw, srv.Headers[n])
	}
	i := slices.IndexFunc(raw, HasHostVariable)
	if i < 0 {
		return ""
	}
	shown := append([]string{srv.Command, srv.Cwd, spot.ShowURL(srv.Name, srv.URL)}, spot.ShowArgs(srv.Name, srv.Args)...)
	hidden := spot.ShowHeaders(srv.Name, srv.Headers)
	for _, n := range names {
		shown = append(shown, hidden[n])
	}
	return fmt.Sprintf("%s uses a variable only the host expands", quote(shown[i]))
}

// hostVar matches the variables hosts expand in their configs and
// Rootkeeper does not: ${VAR}, ${env:X}, ${input:x}, ${workspaceFolder},
// $VAR.
var hostVar = regexp.MustCompile(`\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*`)

// HasHostVariable reports whether s uses a variable a host expands.
func HasHostVariable(s string) bool { return hostVar.MatchString(s) }

// isRootkeeper reports whether command is a rootkeeper program (another
// tool may well have a "bridge" verb).
func isRootkeeper(command string) bool {
	base := strings.TrimSuffix(filepath.Base(filepath.FromSlash(strings.ReplaceAll(command, `\`, "/"))), ".exe")
	return base == "rootkeeper"
}

// isBridge reports whether args are a rootkeeper bridge invocation.
func isBridge(args []string) bool {
	n := len(args)
	return n >= 2 && args[n-2] == "bridge" && (n == 2 || n == 4 && args[0] == "--state-dir")
}

// fit chooses, for an entry of unknown origin, the key of each field that
// it uses. Two keys for one field are refused: hosts that read one or the
// other would run different servers.
func fit(o members, d Dialect) (Dialect, error) {
	for _, field := range []string{"command", "env", "type"} {
		var used []string
		for _, k := range aliases[field] {
			if _, ok := o.get(k); ok {
				used = append(used, k)
			}
		}
		if len(used) > 1 {
			return d, fmt.Errorf("both %q and %q are given: hosts do not agree which one counts", used[0], used[1])
		}
		if len(used) == 1 {
			switch field {
			case "command":
				d.Command = used[0]
			case "env":
				d.Env = used[0]
			case "type":
				d.Type = used[0]
			}
		}
	}
	var urls []string
	for _, u := range d.URLs {
		if v, ok := o.get(u.Key); ok {
			if lit, ok := v.(hujson.Literal); !ok || lit.String() != "" {
				urls = append(urls, u.Key)
			}
		}
	}
	if len(urls) > 1 {
		return d, fmt.Errorf("both %q and %q are given: hosts do not agree which one counts", urls[0], urls[1])
	}
	return d, nil
}

// readKeys are the keys an entry is read on in dialect d: each of them
// spelled twice or in another case makes the entry ambiguous.
func readKeys(d Dialect) []string {
	keys := []string{d.Command, d.Args, d.Env, d.Cwd, d.Headers, d.Type, "type", "disabled", "enabled"}
	if d.Own {
		keys = append(keys, "rootsMode")
	}
	for _, u := range d.URLs {
		keys = append(keys, u.Key)
	}
	keys = append(keys, d.HostOnly...)
	if d.fit {
		for _, a := range aliases {
			keys = append(keys, a...)
		}
	}
	slices.Sort(keys)
	return slices.Compact(slices.DeleteFunc(keys, func(k string) bool { return k == "" }))
}

// members are an object's members: the names as spelled, in order
// (repeats kept), and the last value of each name (what hosts read).
type members struct {
	names []string
	last  map[string]hujson.ValueTrimmed
}

func membersOf(obj *hujson.Object) members {
	m := members{names: make([]string, 0, len(obj.Members)), last: make(map[string]hujson.ValueTrimmed, len(obj.Members))}
	for _, mem := range obj.Members {
		lit, _ := mem.Name.Value.(hujson.Literal)
		n := text(lit)
		m.names = append(m.names, n)
		m.last[n] = mem.Value.Value
	}
	return m
}

// get returns the value of key; a null is no value.
func (m members) get(key string) (hujson.ValueTrimmed, bool) {
	if key == "" {
		return nil, false
	}
	v, ok := m.last[key]
	if lit, isLit := v.(hujson.Literal); ok && isLit && lit.Kind() == 'n' {
		return nil, false
	}
	return v, ok
}

// ambiguous refuses an object that spells one of keys twice, or in
// another case (Unicode case folding, with which Go's encoding/json
// matches keys: "Command", "COMMAND", "ſ" for s, "K" for k).
func (m members) ambiguous(keys []string) error {
	seen := make(map[string]bool, len(keys))
	for _, n := range m.names {
		for _, k := range keys {
			// A rune folds to an ASCII letter from at most three bytes.
			if len(n) > 3*len(k) || !strings.EqualFold(n, k) {
				continue
			}
			if n != k {
				return fmt.Errorf("the key %s is %q in another case: hosts do not agree whether it counts", quote(n), k)
			}
			if seen[k] {
				return fmt.Errorf("the key %q is given twice: hosts do not agree which one counts", k)
			}
			seen[k] = true
		}
	}
	return nil
}

// reader turns an entry's values into text, naming the key of a bad one.
type reader struct {
	o     members
	under string // prefix of the keys' names in errors
}

// field is the string at key ("" when absent).
func (r reader) field(key string) (string, error) {
	v, ok := r.o.get(key)
	if !ok {
		return "", nil
	}
	return r.str(key, v)
}

// str is v, which must be a string.
func (r reader) str(key string, v hujson.ValueTrimmed) (string, error) {
	lit, ok := v.(hujson.Literal)
	if !ok || lit.Kind() != '"' {
		return "", fmt.Errorf("%q is %s, not a string", r.under+key, kindOf(v))
	}
	return r.bounded(strconv.Quote(r.under+key), text(lit))
}

// list is the array v of strings, numbers and booleans (their JSON text:
// a host passes 8080 on as "8080").
func (r reader) list(key string, v hujson.ValueTrimmed) ([]string, error) {
	arr, ok := v.(*hujson.Array)
	if !ok {
		return nil, fmt.Errorf("%q is %s, not an array", r.under+key, kindOf(v))
	}
	out := make([]string, 0, len(arr.Elements))
	for i, el := range arr.Elements {
		what := fmt.Sprintf("%q[%d]", r.under+key, i)
		s, ok := scalar(el.Value)
		if !ok {
			return nil, fmt.Errorf("%s is %s, not a string", what, kindOf(el.Value))
		}
		s, err := r.bounded(what, s)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// strMap is the object at key of strings, numbers and booleans; a null
// leaves its name out (VS Code unsets such a variable). Header names are
// one name in any case: two spellings of one are refused, since which
// value a server got would depend on the order they were set in.
func (r reader) strMap(key string, headers bool) (map[string]string, error) {
	v, ok := r.o.get(key)
	if !ok {
		return nil, nil
	}
	obj, ok := v.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%q is %s, not an object", r.under+key, kindOf(v))
	}
	out := make(map[string]string, len(obj.Members))
	folded := map[string]string{}
	for _, m := range obj.Members {
		lit, _ := m.Name.Value.(hujson.Literal)
		name := text(lit)
		what := fmt.Sprintf("%q %s", r.under+key, quote(name))
		if _, err := r.bounded(what, name); err != nil {
			return nil, err
		}
		if headers {
			if other, ok := folded[strings.ToLower(name)]; ok && other != name {
				return nil, fmt.Errorf("%q names the header %s twice (%s): header names are one in any case", r.under+key, quote(other), quote(name))
			}
			folded[strings.ToLower(name)] = name
		}
		if lit, ok := m.Value.Value.(hujson.Literal); ok && lit.Kind() == 'n' {
			delete(out, name)
			continue
		}
		s, ok := scalar(m.Value.Value)
		if !ok {
			return nil, fmt.Errorf("%s is %s, not a string", what, kindOf(m.Value.Value))
		}
		s, err := r.bounded(what, s)
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// is reports whether key holds the boolean of kind ('t' or 'f').
func (r reader) is(key string, kind hujson.Kind) bool {
	v, _ := r.o.get(key)
	lit, ok := v.(hujson.Literal)
	return ok && lit.Kind() == kind
}

// bounded refuses s when it is longer than MaxString.
func (r reader) bounded(what, s string) (string, error) {
	if len(s) > MaxString {
		return "", fmt.Errorf("%s is %d bytes long (at most %d: no program could be given it)", what, len(s), MaxString)
	}
	return s, nil
}

// scalar is the text of a string, number or boolean.
func scalar(v hujson.ValueTrimmed) (string, bool) {
	lit, ok := v.(hujson.Literal)
	if !ok || lit.Kind() == 'n' {
		return "", false
	}
	return text(lit), true
}

// text is a literal's text: a string's value, unescaped (without a
// decoder when it has no escape to undo), or a number's or boolean's JSON.
func text(lit hujson.Literal) string {
	if lit.Kind() == '"' {
		if inner := lit[1 : len(lit)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			return string(inner)
		}
	}
	return lit.String()
}

// isFalse reports whether v is false or null.
func isFalse(v hujson.ValueTrimmed) bool {
	lit, ok := v.(hujson.Literal)
	return ok && (lit.Kind() == 'f' || lit.Kind() == 'n')
}

func kindOf(v hujson.ValueTrimmed) string {
	if v == nil {
		return "nothing"
	}
	switch v.Kind() {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '0':
		return "a number"
	}
	return "a string"
}

// quote quotes s for a message, cut to its first 60 characters: a name
// or value may be long, and a message is one line.
func quote(s string) string {
	const max = 60
	if utf8.RuneCountInString(s) <= max {
		return strconv.Quote(s)
	}
	n := 0
	for i := range s {
		if n == max {
			return strconv.Quote(s[:i]) + "…"
		}
		n++
	}
	return strconv.Quote(s)
}
