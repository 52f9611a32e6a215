package hosts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"rootkeeper/app"
	"rootkeeper/app/serverentry"
)

// Entry is one server entry of a host's config file.
type Entry struct {
	// Host is the host's ID.
	Host string `json:"host"`
	// File is the config file holding it.
	File string `json:"file"`
	// Key is the path of keys to the entry inside the file.
	Key []string `json:"key"`
	// Name is the host's name for the server.
	Name string `json:"name"`
	// Scope says where it applies: "user", "local DIR", "project".
	Scope string `json:"scope"`
	// Rootkeeper is the name it has (or would have) in Rootkeeper.
	Rootkeeper string `json:"rootkeeper"`
	// Protected: the entry runs Rootkeeper's bridge.
	Protected bool `json:"protected"`
	// Program says what the entry runs (command line, or transport and
	// URL), for people.
	Program string `json:"program,omitempty"`
	// Skip says why the entry cannot be bridged; empty when it can.
	Skip string `json:"skip,omitempty"`
	// Server is what the entry runs, as Rootkeeper stores it: no
	// environment (that stays in the host's file, where the host expands
	// it) and not yet stripped of folders on its command line.
	Server app.Server `json:"-"`
	// HostEnv is the entry's environment, left in the host's file.
	HostEnv map[string]string `json:"-"`

	base []string            // where command, args… live (Key, or Key+"command" for Zed's old shape)
	d    serverentry.Dialect // their keys there
}

// readEntry makes sense of the entry at key, through the one reader of
// server entries (serverentry.Read) in the host's dialect. The entry's
// environment stays in the host's file: it is HostEnv, not the server's.
func readEntry(h *Host, d doc, t serverTable, name string) Entry {
	e := Entry{Host: h.ID, File: d.path(), Key: append(slices.Clone(t.key), name), Name: name, Scope: t.scope, d: h.dialect}
	e.base = e.Key
	e.Rootkeeper = rootkeeperName(h.ID, t.tag, name)
	if isList(d, t.key) {
		// A list of servers (Continue's mcpServers): each names itself.
		v, _ := d.value(e.Key)
		if obj, ok := v.(map[string]any); ok {
			if n, ok := obj["name"].(string); ok && n != "" {
				e.Name = n
				e.Rootkeeper = rootkeeperName(h.ID, t.tag, n)
			}
		}
	}
	raw, ok := entryJSON(d, e.Key)
	if !ok {
		e.Skip = "not an object"
		return e
	}
	r, err := serverentry.Read(e.Rootkeeper, raw, h.dialect)
	e.d = r.Dialect
	if r.Under != "" {
		e.base = append(slices.Clone(e.Key), r.Under)
	}
	srv := r.Server
	e.HostEnv, srv.Env = srv.Env, nil
	e.Server = srv
	if srv.Type != "" {
		e.Program = app.Program(srv)
	}
	switch {
	case err != nil:
		e.Skip = err.Error()
	case r.Bridges != "":
		e.Protected = true
		e.Rootkeeper = r.Bridges
	default:
		e.Skip = r.Skip
	}
	return e
}

// isList reports whether the field at key is a list, without decoding a
// JSON one (which, for each entry of a big table, took time in the square
// of its size).
func isList(d doc, key []string) bool {
	if jd, ok := d.(*jsonDoc); ok {
		v := jd.node(key)
		return v != nil && v.Value.Kind() == '['
	}
	v, _ := d.value(key)
	_, ok := v.([]any)
	return ok
}

// entryJSON is the entry at key as JSON: as written in a JSON file, with
// its comments and any key given twice (which Read refuses); the meaning
// of a TOML or YAML one, whose parsers refuse a key given twice.
func entryJSON(d doc, key []string) ([]byte, bool) {
	if jd, ok := d.(*jsonDoc); ok {
		return jd.raw(key)
	}
	v, ok := d.value(key)
	if !ok {
		return nil, false
	}
	raw, err := json.Marshal(v)
	return raw, err == nil
}

func dig(v any, key []string) (any, bool) {
	for _, k := range key {
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[k]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(c) || strconv.Itoa(i) != k {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// rootkeeperName names a host's server in Rootkeeper: host, scope tag and
// the host's name, joined by dots, in the characters server names allow.
// Names of different hosts and scopes cannot collide: the host ID and the
// tag (a project's folder name plus a hash of its path) tell them apart.
func rootkeeperName(host, tag, name string) string {
	parts := []string{host}
	if tag != "" {
		parts = append(parts, tag)
	}
	clean := nameSafe(name)
	if clean != name {
		// Two names that clean to the same text must not become one.
		clean += "-" + shortHash(name)
	}
	n := strings.Join(append(parts, clean), ".")
	if len(n) > 64 {
		n = n[:55] + "-" + shortHash(n)
	}
	return n
}

func nameSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.TrimLeft(b.String(), "-.")
	if out == "" {
		out = "server"
	}
	return out
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:3])
}

// baseTag is the tag of a project folder: its name and a short hash of its
// path, so two projects both called "api" stay apart.
func baseTag(dir string) string {
	b := filepath.Base(filepath.Clean(dir))
	if len(b) > 20 {
		b = b[:20]
	}
	return nameSafe(b) + "-" + shortHash(filepath.Clean(dir))
}
